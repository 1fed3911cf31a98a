// What the drafter reads of an agent (id, name, instructions, tools), kept per row and version as the agents'
// JSON cache keeps their JSON (json-cache.ts): a draft over a small workspace reads the page of ids and versions
// from the (workspace_id, id, version) index and only the rows not kept at that version, so an agent changed by
// another instance is never used stale. Each profile keeps its JSON text too: the builtin drafter hands the
// workspace's agents to its worker as one text (builtin.ts), which costs a copy instead of a structured clone of
// every object. Only reads outside a transaction fill it. Bounded by the characters it holds, oldest first out.
import { dbContext, type DbHandle } from '../db/context.js'

/** What the drafter reads of an agent (the drafter's AgentProfile has this shape; agents import nothing of the drafter). */
export interface AgentProfile {
  id: string
  name: string
  instructions: string | null
  tools: string[]
}

export const MAX_DRAFTING_CHARS = 8 * 1024 * 1024

interface Entry {
  version: number
  profile: AgentProfile
  json: string
}

export class DraftingProfileCache {
  private readonly entries = new Map<string, Entry>()
  private chars = 0

  constructor(private readonly maxChars = MAX_DRAFTING_CHARS) {}

  get(id: string, version: number): Entry | undefined {
    const entry = this.entries.get(id)
    return entry && entry.version === version ? entry : undefined
  }

  /** Keeps `profile` (frozen: it is shared by every draft that reads it) as row `id` at `version`. */
  set(id: string, version: number, profile: AgentProfile): Entry {
    this.delete(id)
    Object.freeze(profile.tools)
    const entry = { version, profile: Object.freeze(profile), json: JSON.stringify(profile) }
    if (entry.json.length > this.maxChars) return entry
    this.entries.set(id, entry)
    this.chars += entry.json.length
    for (const [oldest, kept] of this.entries) {
      if (this.chars <= this.maxChars) break
      this.entries.delete(oldest)
      this.chars -= kept.json.length
    }
    return entry
  }

  delete(id: string): void {
    const entry = this.entries.get(id)
    if (!entry) return
    this.entries.delete(id)
    this.chars -= entry.json.length
  }

  get size(): { entries: number; chars: number } {
    return { entries: this.entries.size, chars: this.chars }
  }
}

const caches = new WeakMap<object, DraftingProfileCache>()

/** The cache of the database `db` is (or is a transaction of). */
export function draftingProfileCache(db: DbHandle): DraftingProfileCache {
  const context = dbContext(db)
  let cache = caches.get(context)
  if (!cache) caches.set(context, (cache = new DraftingProfileCache()))
  return cache
}

const texts = new WeakMap<readonly AgentProfile[], string>()

/** Marks `agents` as having the JSON text `json` (the array's JSON, as JSON.stringify would write it). */
export function withDraftingJson(agents: AgentProfile[], json: string): AgentProfile[] {
  texts.set(agents, json)
  return agents
}

/** The JSON text of a list of agents made by the agent store, if it has one. */
export const draftingJsonOf = (agents: readonly AgentProfile[]): string | undefined => texts.get(agents)
