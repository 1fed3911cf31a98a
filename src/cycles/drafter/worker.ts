// The worker-thread side of the builtin drafter's pool (see builtin.ts): drafts one request, and forgets
// agents the main thread reports as changed or deleted.
import { BroadcastChannel } from 'node:worker_threads'
import { forgetAgent } from './assign.js'
import { draftBuiltin } from './builtin.js'
import { AGENT_CHANGES_CHANNEL } from './agent-changes.js'
import type { DraftRequest } from './types.js'

const changes = new BroadcastChannel(AGENT_CHANGES_CHANNEL)
changes.onmessage = (event) => forgetAgent(String((event as MessageEvent).data))
changes.unref()

export default function draft(request: DraftRequest) {
  return draftBuiltin(request)
}
