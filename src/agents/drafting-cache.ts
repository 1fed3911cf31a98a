// What the drafter reads of an agent (id, name, instructions, tools), kept per row and version as the agents'
// JSON cache keeps their JSON (json-cache.ts): a draft over a small workspace reads the page of ids and versions
// from the (workspace_id, id, version) index and only the rows not kept at that version, so an agent changed by
// another instance is never used stale. Each profile keeps its JSON text too: the builtin drafter hands the
// workspace's agents to its worker as one text (builtin.ts), which costs a copy instead of a structured clone of
// every object. Only reads outside a transaction fill it. Bounded by the characters it holds, oldest first out.
//
// On SQLite, the whole list of a workspace is kept too, by the database's data mark (sqlite-driver.ts dataMark:
// it changes with every row changed through this connection and every commit through any other), so a draft
// while nothing was written anywhere reads no agent, not even the page of versions; any write, to any table,
// sends the next draft back to that page. PostgreSQL has no such mark to read cheaply (a counter per workspace
// would be one more row that every agent write locks), so there each draft reads the page.
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

declare module '../db/context.js' {
  interface DbContext {
    /** What the drafter reads of each agent, by row version (this file), made on first use. */
    draftingProfiles?: DraftingProfileCache
    /** Workspaces' whole drafting lists by data mark (this file), made on first use; SQLite only. */
    draftingLists?: DraftingListCache
  }
}

/** The cache of the database `db` is (or is a transaction of). */
export function draftingProfileCache(db: DbHandle): DraftingProfileCache {
  return (dbContext(db).draftingProfiles ??= new DraftingProfileCache())
}

/** A workspace's list as the drafter reads it (null: more agents than a draft reads whole), and its size. */
interface Listed {
  agents: readonly AgentProfile[] | null
  chars: number
}

export const MAX_LISTED_CHARS = 8 * 1024 * 1024

/** Whole lists per workspace, each kept at the data mark it was read after. */
export class DraftingListCache {
  private readonly lists: VersionedRowCache<Listed>

  constructor(maxChars = MAX_LISTED_CHARS) {
    this.lists = new VersionedRowCache<Listed>(maxChars, (listed) => listed.chars)
  }

  /** The list of `workspaceId` read after data mark `mark`, if kept (undefined), or null when it had too many agents. */
  get(workspaceId: string, mark: string): readonly AgentProfile[] | null | undefined {
    return this.lists.get(workspaceId, mark)?.agents
  }

  /** Keeps `agents` (frozen: every draft shares it) as the list of `workspaceId` at data mark `mark`. */
  set(workspaceId: string, mark: string, agents: AgentProfile[] | null): void {
    this.lists.set(workspaceId, mark, { agents: agents && Object.freeze(agents), chars: 64 + (agents ? (draftingJsonOf(agents)?.length ?? 0) : 0) })
  }
}

/** The list cache of the database `db` is (or is a transaction of). */
export function draftingListCache(db: DbHandle): DraftingListCache {
  return (dbContext(db).draftingLists ??= new DraftingListCache())
}

const texts = new WeakMap<readonly AgentProfile[], string>()

/** Marks `agents` as having the JSON text `json` (the array's JSON, as JSON.stringify would write it). */
export function withDraftingJson(agents: AgentProfile[], json: string): AgentProfile[] {
  texts.set(agents, json)
  return agents
}

/** The JSON text of a list of agents made by the agent store, if it has one. */
export const draftingJsonOf = (agents: readonly AgentProfile[]): string | undefined => texts.get(agents)
