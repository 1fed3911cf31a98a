// What the drafter reads of an agent (id, name, instructions, tools), kept per row and version as the agents'
// JSON cache keeps their JSON (json-cache.ts): a draft over a small workspace reads the page of ids and versions
// from the (workspace_id, id, version) index and only the rows not kept at that version, so an agent changed by
// another instance is never used stale. Each profile keeps its JSON text too: the builtin drafter hands the
// workspace's agents to its worker as one text (builtin.ts), which costs a copy instead of a structured clone of
// every object. Only reads outside a transaction fill it. Bounded by the characters it holds, oldest first out.
import { dbContext, type DbHandle } from '../db/context.js'
import { VersionedRowCache } from './versioned-cache.js'

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
  private readonly rows: VersionedRowCache<Entry>

  constructor(maxChars = MAX_DRAFTING_CHARS) {
    this.rows = new VersionedRowCache<Entry>(maxChars, (entry) => entry.json.length)
  }

  get(id: string, version: number): Entry | undefined {
    return this.rows.get(id, version)
  }

  /** Keeps `profile` (frozen: it is shared by every draft that reads it) as row `id` at `version`. */
  set(id: string, version: number, profile: AgentProfile): Entry {
    Object.freeze(profile.tools)
    return this.rows.set(id, version, { version, profile: Object.freeze(profile), json: JSON.stringify(profile) })
  }

  get size(): { entries: number; chars: number } {
    return this.rows.size
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
