// Agents changed or deleted: the drafter's caches of their words (in this thread and in the drafting
// workers) drop them. app.ts gives it to the agent routes as their onAgentChanged hook, told after the write commits.
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
