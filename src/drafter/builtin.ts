// The builtin engine: deterministic, offline, no I/O. `draftBuiltin` is the engine itself; the Drafter runs
// it on a worker thread (piscina) under a deadline, so that no prompt can hold up the event loop.
import { fileURLToPath } from 'node:url'
import { Piscina } from 'piscina'
import { AppError } from '../http/problem.js'
import { newId } from '../ids.js'
import { AgentIndex } from './assign.js'
import { generateCycle } from './generate.js'
import { refineCycle } from './refine/index.js'
import type { PlanRequest, SearchPlan } from './plan.js'
import type { Drafter, DraftOutcome, DraftRequest } from './types.js'
import type { WorkerTask } from './worker.js'
import { draftingJsonOf } from '../agents/drafting-cache.js'
import { indexByText, keptIndex } from './index-by-text.js'

export function draftBuiltin(request: DraftRequest, makeId: () => string = newId, agents?: AgentIndex): DraftOutcome {
  const context = { agents: agents ?? new AgentIndex(request.agents), newId: makeId }
  return request.mode === 'refine' && request.current ? refineCycle(request.prompt, request.current, context) : generateCycle(request.prompt, context)
}

/** A draft that runs longer than this on its worker is stopped (the worker is replaced) and answered 422. */
export const DEFAULT_DRAFT_DEADLINE_MS = 5000

// Under tsx (tests, eval) this module is a .ts file and so is the worker; from dist/ both are .js.
const WORKER = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? './worker.ts' : './worker.js', import.meta.url))

// One pool per process, shared by every app instance: two cores, so at most two drafts at once; idle
// workers are unref'd by piscina and do not keep the process alive.
let pool: { workers: Piscina; ready: Promise<unknown> } | null = null
const WARM_UP: WorkerTask = { kind: 'draft', request: { mode: 'generate', prompt: 'Write a reply.', agents: [] } }

/** The pool, once a worker has loaded the engine: the deadline counts drafting, not a worker's start. */
async function draftingPool(): Promise<Piscina> {
  if (!pool) {
    const workers = new Piscina({ filename: WORKER, minThreads: 1, maxThreads: 2, idleTimeout: 60000, maxQueue: 64 })
    pool = { workers, ready: workers.run(WARM_UP) }
  }
  await pool.ready
  return pool.workers
}

export interface BuiltinOptions {
  deadlineMs?: number
}

export function createBuiltinDrafter(options: BuiltinOptions = {}): Drafter {
  const deadlineMs = options.deadlineMs ?? DEFAULT_DRAFT_DEADLINE_MS
  return {
    name: 'builtin',
    async draft(request) {
      // Agents listed by the store travel as their JSON text: one string to copy instead of a structured clone of
      // every agent (a fifth of the main thread's CPU per draft, bench:profile draft), and the worker keeps what it
      // built from a text it has seen (worker.ts).
      const agentsJson = draftingJsonOf(request.agents)
      if (agentsJson !== undefined && draftsHere(request, agentsJson)) return draftBuiltin(request, newId, indexByText(agentsJson, request.agents))
      const task: WorkerTask = agentsJson === undefined ? { kind: 'draft', request } : { kind: 'draft', request: { ...request, agents: [] }, agentsJson }
      return (await runOffLoop(task, deadlineMs)) as DraftOutcome
    },
  }
}

/**
 * A short generate prompt is drafted on this thread, without the pool's two thread hops (on a busy core they
 * were most of a small draft's cost: bench:profile draft): its cost is bounded by its length (reading steps is
 * linear, and the slowest hostile prompt cut to this length drafts in about a millisecond over
 * DRAFT_ALL_AGENTS_UP_TO agents; docs/performance.md). Only over a list of agents from the store (with its JSON
 * text, so ≤ DRAFT_ALL_AGENTS_UP_TO agents) whose index this thread holds, or can build from at most
 * INLINE_AGENTS_TEXT characters; refines, longer prompts and larger lists go to the pool under the deadline.
 */
export const INLINE_PROMPT_CHARS = 1000
export const INLINE_AGENTS_TEXT = 64 * 1024

const draftsHere = (request: DraftRequest, agentsJson: string) =>
  request.mode === 'generate' && request.prompt.length <= INLINE_PROMPT_CHARS && (agentsJson.length <= INLINE_AGENTS_TEXT || keptIndex(agentsJson) !== undefined)

/** What to search a workspace's agents by for a draft (plan.ts), worked out on the pool. */
export async function searchPlanOffLoop(request: PlanRequest, deadlineMs = DEFAULT_DRAFT_DEADLINE_MS): Promise<SearchPlan> {
  return (await runOffLoop({ kind: 'plan', request }, deadlineMs)) as SearchPlan
}

async function runOffLoop(task: WorkerTask, deadlineMs: number): Promise<unknown> {
  const workers = await draftingPool()
  const signal = AbortSignal.timeout(deadlineMs)
  try {
    return await workers.run(task, { signal })
  } catch (error) {
    if (signal.aborted) {
      throw new AppError('unprocessable', `The prompt took longer than ${deadlineMs} ms to draft and was stopped; shorten it or split it into several drafts.`)
    }
    if ((error as Error).message?.includes('Task queue is at limit')) {
      throw new AppError('service-unavailable', 'Too many drafts are waiting; try again in a moment.')
    }
    throw error
  }
}
