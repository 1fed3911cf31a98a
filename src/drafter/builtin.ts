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

export function draftBuiltin(request: DraftRequest, makeId: () => string = newId): DraftOutcome {
  const context = { agents: new AgentIndex(request.agents), newId: makeId }
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
      return (await runOffLoop({ kind: 'draft', request }, deadlineMs)) as DraftOutcome
    },
  }
}

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
