// The worker-thread side of the builtin drafter's pool (see builtin.ts): drafts one request, and forgets
// agents the main thread reports as changed or deleted.
import { BroadcastChannel } from 'node:worker_threads'
import { forgetAgent } from './assign.js'
import { indexByText } from './index-by-text.js'
import { draftBuiltin } from './builtin.js'
import { searchPlan, type PlanRequest } from './plan.js'
import { AGENT_CHANGES_CHANNEL } from './agent-changes.js'
import type { DraftRequest } from './types.js'

const changes = new BroadcastChannel(AGENT_CHANGES_CHANNEL)
changes.onmessage = (event) => forgetAgent(String((event as MessageEvent).data))
changes.unref()

/**
 * A task: a draft, or what to search the agents by (it reads the whole prompt, so it runs here too). A draft's
 * agents come either in `request.agents` or as `agentsJson`, the JSON text of the list (then `request.agents` is
 * empty).
 */
export type WorkerTask = { kind: 'draft'; request: DraftRequest; agentsJson?: string } | { kind: 'plan'; request: PlanRequest }

export default function run(task: WorkerTask) {
  if (task.kind === 'plan') return searchPlan(task.request)
  return task.agentsJson === undefined ? draftBuiltin(task.request) : draftBuiltin(task.request, undefined, indexByText(task.agentsJson))
}
