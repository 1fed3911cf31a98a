// The agents' index (assign.ts AgentIndex) built from the last few lists of agents, found by the list's JSON text:
// the text holds every word the index is built from, so the same text gives the same index, and an agent changed
// since has another text. Compared newest first (a string comparison, no hashing of the text).
import { AgentIndex, type AgentProfile } from './assign.js'

const RECENT_TEXTS = 4
const recent: Array<{ json: string; index: AgentIndex }> = []

/** The index kept for `json`, if any (moved to the front). */
export function keptIndex(json: string): AgentIndex | undefined {
  const at = recent.findIndex((entry) => entry.json === json)
  if (at < 0) return undefined
  const [entry] = recent.splice(at, 1)
  recent.unshift(entry!)
  return entry!.index
}

/** The index for the agents whose JSON text is `json` (`agents`, or parsed from the text), kept. */
export function indexByText(json: string, agents?: readonly AgentProfile[]): AgentIndex {
  const kept = keptIndex(json)
  if (kept) return kept
  const index = new AgentIndex(agents ?? (JSON.parse(json) as AgentProfile[]))
  recent.unshift({ json, index })
  if (recent.length > RECENT_TEXTS) recent.pop()
  return index
}
