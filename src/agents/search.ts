// The agents' full-text index (table agent_search, migration 0035), which the drafter searches for the
// agents that may fit a prompt: written by the agent store in the same transaction as the agent itself.
import { PostgresAdapter, sql, type Kysely } from 'kysely'
import type { Database } from '../db/database.js'

export interface SearchableAgent {
  id: string
  workspace_id: string
  name: string
  instructions: string | null
  tools: string
}

const isPostgres = (db: Kysely<Database>) => db.getExecutor().adapter instanceof PostgresAdapter

/** Tools are stored as JSON: their names' parts are the words ("web_search" → web search). */
const toolWords = (tools: string) => tools.replace(/[_[\]",]/g, ' ')

/**
 * Writes (or rewrites) an agent's entry; call with the transaction that writes the agent. In SQLite,
 * agent_search_keys says which entry is the agent's, so that it is found without a scan.
 */
export async function indexAgentForSearch(db: Kysely<Database>, agent: SearchableAgent, existing = false): Promise<void> {
  if (isPostgres(db)) {
    await sql`
      insert into agent_search (agent_id, workspace_id, document)
      values (${agent.id}, ${agent.workspace_id},
        setweight(to_tsvector('english', ${agent.name}), 'A') ||
        setweight(to_tsvector('english', ${toolWords(agent.tools)}), 'B') ||
        setweight(to_tsvector('english', ${agent.instructions ?? ''}), 'C'))
      on conflict (agent_id) do update set document = excluded.document`.execute(db)
    return
  }
  if (existing) await unindexAgentForSearch(db, agent.id)
  await sql`
    insert into agent_search (agent_id, workspace_id, name, tools, instructions)
    values (${agent.id}, ${agent.workspace_id}, ${agent.name}, ${toolWords(agent.tools)}, ${agent.instructions ?? ''})`.execute(db)
  await sql`insert into agent_search_keys (agent_id, search_rowid) values (${agent.id}, last_insert_rowid())`.execute(db)
}

/** Drops an agent's entry; call with the transaction that deletes the agent. */
export async function unindexAgentForSearch(db: Kysely<Database>, id: string): Promise<void> {
  if (isPostgres(db)) {
    await sql`delete from agent_search where agent_id = ${id}`.execute(db)
    return
  }
  await sql`delete from agent_search where rowid = (select search_rowid from agent_search_keys where agent_id = ${id})`.execute(db)
  await sql`delete from agent_search_keys where agent_id = ${id}`.execute(db)
}

/** At most this many candidates per draft, best first; they are then scored by the drafter. */
export const MAX_CANDIDATES = 400
/** At most this many distinct search terms per draft. */
export const MAX_TERMS = 512

const usable = (terms: string[]) => [...new Set(terms.map((t) => t.toLowerCase()).filter((t) => /^[\p{L}\p{N}]{2,40}$/u.test(t)))]

/**
 * The ids of the workspace's agents whose name, tools or instructions hold any of `words`, or whose name or
 * tools hold any of `related` (each stemmed by the database), the best matches first: name matches weigh
 * most, then tools, then instructions.
 */
export async function searchAgentIds(db: Kysely<Database>, workspaceId: string, words: string[], related: string[] = [], limit = MAX_CANDIDATES): Promise<string[]> {
  const own = usable(words).slice(0, MAX_TERMS)
  const near = usable(related).filter((t) => !own.includes(t)).slice(0, MAX_TERMS)
  if (own.length === 0 && near.length === 0) return []
  if (isPostgres(db)) {
    // Terms are letters and digits only: safe inside a tsquery. `:AB` limits a term to names and tools.
    const query = [...own, ...near.map((t) => `${t}:AB`)].join(' | ')
    const { rows } = await sql<{ agent_id: string }>`
      select agent_id from agent_search, to_tsquery('english', ${query}) as query
      where workspace_id = ${workspaceId} and document @@ query
      order by ts_rank(document, query) desc, agent_id
      limit ${limit}`.execute(db)
    return rows.map((r) => r.agent_id)
  }
  const or = (terms: string[]) => terms.map((t) => `"${t}"`).join(' OR ')
  const match = [own.length > 0 ? or(own) : '', near.length > 0 ? `{name tools} : (${or(near)})` : ''].filter(Boolean).join(' OR ')
  const { rows } = await sql<{ agent_id: string }>`
    select agent_id from agent_search
    where agent_search match ${match} and workspace_id = ${workspaceId}
    order by rank
    limit ${limit}`.execute(db)
  return rows.map((r) => r.agent_id)
}
