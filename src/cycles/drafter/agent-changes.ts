// Agents changed or deleted: the drafter's caches of their words (in this thread and in the drafting
// workers) drop them. Called by the agent store after its write.
import { BroadcastChannel } from 'node:worker_threads'
import { forgetAgent } from './assign.js'

export const AGENT_CHANGES_CHANNEL = 'tandem:drafter:agent-changes'

let channel: BroadcastChannel | null = null

export function agentChanged(id: string): void {
  forgetAgent(id)
  if (!channel) {
    channel = new BroadcastChannel(AGENT_CHANGES_CHANNEL)
    channel.unref()
  }
  channel.postMessage(id)
}
