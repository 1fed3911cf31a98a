// The agents' search index (tables agent_search and, in SQLite, agent_search_keys; migrations 0035 and 0037),
// in which the drafter finds the agents that may fit a prompt: written by the agent store in the same
// transaction as the agent itself. In SQLite the entry's writes run at the end of that transaction's batch of
// group commit, outside its savepoint (sqlite-driver.ts atBatchCommit): FTS5 would otherwise write a segment per
// agent; they commit with the agent or not at all, and readers inside a transaction run them first.
import { CompiledQuery, PostgresAdapter, sql, type Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { sqliteDriverOf } from '../db/sqlite-driver.js'
import { MAX_INDEXED_INSTRUCTIONS, MAX_INDEXED_TOOL, MAX_INDEXED_TOOLS } from '../text/agent-text.js'
import { words } from '../text/language.js'

export interface SearchableAgent {
  id: string
  workspace_id: string
  name: string
  instructions: string | null
  tools: string
}

const isPostgres = (db: Kysely<Database>) => db.getExecutor().adapter instanceof PostgresAdapter

/**
 * What the drafter's scorer reads of an agent (assign.ts), so that the index scores agents as the scorer does:
 * the start of its instructions, and its first tools (stored as JSON), their names' parts as words
 * ("web_search" → web search).
 */
const scoredText = (agent: SearchableAgent) => ({
  instructions: (agent.instructions ?? '').slice(0, MAX_INDEXED_INSTRUCTIONS),
  tools: (JSON.parse(agent.tools) as string[]).slice(0, MAX_INDEXED_TOOLS).map((t) => t.slice(0, MAX_INDEXED_TOOL)).join(' ').replace(/_/g, ' '),
})
/** An agent with neither instructions nor tools: the drafter reads the agentive nouns of its name as verbs. */
const knownByNameOnly = (agent: SearchableAgent) => !agent.instructions && agent.tools === '[]'
/** The name as the drafter reads it (assign.ts: lower-case words), whole and its first two words. */
const nameKeys = (name: string) => {
  const ws = words(name)
  return { start: ws.slice(0, 2).join(' '), whole: ws.join(' ') }
}

/**
 * Writes (or rewrites) an agent's entry; call with the transaction that writes the agent. In SQLite,
 * agent_search_keys says which entry is the agent's, so that it is found without a scan.
 */
export async function indexAgentForSearch(db: Kysely<Database>, agent: SearchableAgent, existing = false): Promise<void> {
  const name = nameKeys(agent.name)
  const text = scoredText(agent)
  if (isPostgres(db)) {
    await sql`
      insert into agent_search (agent_id, workspace_id, document, name_start, name_words)
      values (${agent.id}, ${agent.workspace_id},
        setweight(to_tsvector('english', ${agent.name}), 'A') ||
        setweight(to_tsvector('english', ${text.tools}), 'B') ||
        setweight(to_tsvector('english', ${text.instructions}), 'C'),
        ${name.start}, ${name.whole})
      on conflict (agent_id) do update set document = excluded.document, name_start = excluded.name_start, name_words = excluded.name_words`.execute(db)
    return
  }
  if (existing) await unindexAgentForSearch(db, agent.id)
  await writeOnSqlite(db, INSERT_ENTRY, [agent.id, agent.workspace_id, agent.name, text.tools, text.instructions, knownByNameOnly(agent) ? 'yes' : ''])
  await writeOnSqlite(db, INSERT_KEY, [agent.id, agent.workspace_id, name.start, name.whole])
}

// SQLite's entry: the FTS5 row, then the key row that finds it (rowid of the FTS5 row just written); both run
// one after the other at the batch's end, in the order they were handed over.
const INSERT_ENTRY = 'insert into agent_search (agent_id, workspace_id, name, tools, instructions, name_only) values (?, ?, ?, ?, ?, ?)'
const INSERT_KEY = 'insert into agent_search_keys (agent_id, search_rowid, workspace_id, name_start, name_words) values (?, last_insert_rowid(), ?, ?, ?)'
const DELETE_ENTRY = 'delete from agent_search where rowid = (select search_rowid from agent_search_keys where agent_id = ?)'
const DELETE_KEY = 'delete from agent_search_keys where agent_id = ?'

/** A write of SQLite's entry: at the end of the caller's batch when it is a transaction of the batching driver, else now. */
async function writeOnSqlite(db: Kysely<Database>, text: string, parameters: unknown[]): Promise<void> {
  if (db.isTransaction && sqliteDriverOf(db)?.atBatchCommit(text, parameters)) return
  await db.executeQuery(CompiledQuery.raw(text, parameters))
}

/** Before reading SQLite's entries inside a transaction: the writes handed over for the batch's end, run now. */
const readyToRead = (db: Kysely<Database>) => {
  if (db.isTransaction) sqliteDriverOf(db)?.runBatchWrites()
}

/** Drops an agent's entry; call with the transaction that deletes the agent. */
export async function unindexAgentForSearch(db: Kysely<Database>, id: string): Promise<void> {
  if (isPostgres(db)) {
    await sql`delete from agent_search where agent_id = ${id}`.execute(db)
    return
  }
  await writeOnSqlite(db, DELETE_ENTRY, [id])
  await writeOnSqlite(db, DELETE_KEY, [id])
}

/**
 * The ids of the workspace's agents named in any of these texts (lower-case words, as the drafter reads a
 * step or a reference): whose whole name, read as the drafter reads names, is a run of a text's words.
 * Looked up by name's first two words, so only agents that may be named are read.
 */
export async function namedAgentIds(db: Kysely<Database>, workspaceId: string, texts: string[][]): Promise<string[]> {
  const starts = new Set<string>()
  for (const ws of texts) {
    for (let i = 0; i < ws.length; i++) {
      starts.add(ws[i] as string)
      if (i + 1 < ws.length) starts.add(`${ws[i]} ${ws[i + 1]}`)
    }
  }
  if (starts.size === 0) return []
  const list = JSON.stringify([...starts])
  if (!isPostgres(db)) readyToRead(db)
  const { rows } = isPostgres(db)
    ? await sql<{ agent_id: string; name_words: string }>`
        select agent_id, name_words from agent_search
        where workspace_id = ${workspaceId} and name_start = any(array(select jsonb_array_elements_text(${list}::jsonb)))
        order by agent_id`.execute(db)
    : await sql<{ agent_id: string; name_words: string }>`
        select agent_id, name_words from agent_search_keys
        where workspace_id = ${workspaceId} and name_start in (select value from json_each(${list}))
        order by search_rowid`.execute(db)
  // A name is named where its words are a run of a text's words: look for " name " in " text ".
  const spaced = texts.map((ws) => ` ${ws.join(' ')} `)
  return rows.filter((row) => row.name_words !== '' && spaced.some((text) => text.includes(` ${row.name_words} `))).map((row) => row.agent_id)
}

/** A word to look agents up by, with the factor its matches count for; `nameOnly`: in the names of agents that have neither instructions nor tools. */
export interface SearchTerm {
  word: string
  factor: number
  nameOnly?: boolean
}

/** Per query, this many agents: the best by the scorer's weights, best first. */
export const CANDIDATES_PER_QUERY = 20
/** At most this many distinct terms per query (the highest factors first). */
export const MAX_TERMS = 512
/** At most this many queries of one draft at a time (on PostgreSQL, each on a connection of the pool). */
const PARALLEL_QUERIES = 3

// A match in an agent's name counts for 3, in its tools 2, in its instructions 1 (the drafter's scorer, assign.ts);
// a term counts once per agent, at its best column.
const NAME_WEIGHT = 3
const TOOL_WEIGHT = 2
const INSTRUCTION_WEIGHT = 1

const usable = (terms: SearchTerm[]) => {
  const best = new Map<string, SearchTerm>()
  for (const term of terms) {
    const word = term.word.toLowerCase()
    if (!/^[\p{L}\p{N}]{2,40}$/u.test(word) || !(term.factor > 0)) continue
    const key = `${word} ${term.nameOnly ? 1 : 0}`
    if ((best.get(key)?.factor ?? 0) < term.factor) best.set(key, { word, factor: term.factor, nameOnly: term.nameOnly === true })
  }
  return [...best.values()].sort((a, b) => b.factor - a.factor).slice(0, MAX_TERMS)
}

/**
 * For each query, the ids of the workspace's agents with the highest score on its terms — the sum, over the
 * terms an agent holds, of the term's factor times the weight of the best column it is in (name 3, tools 2,
 * instructions 1), which is how the drafter's scorer ranks agents — best first (ties: oldest entry first); then
 * the queries' lists merged, best of each query first. Every agent of the workspace can be among them: the
 * database scores every entry that holds a term, and only the best `perQuery` of each query are returned.
 */
export async function searchAgents(db: Kysely<Database>, workspaceId: string, queries: SearchTerm[][], perQuery = CANDIDATES_PER_QUERY): Promise<string[]> {
  // On PostgreSQL a few queries run side by side, on connections of the pool (SQLite has one connection).
  const pending = queries.map(usable).filter((terms) => terms.length > 0)
  const lists: string[][] = new Array(pending.length)
  let next = 0
  const worker = async () => {
    for (let i = next++; i < pending.length; i = next++) {
      const terms = pending[i] as SearchTerm[]
      lists[i] = isPostgres(db) ? await bestOnPostgres(db, workspaceId, terms, perQuery) : await bestOnSqlite(db, workspaceId, terms, perQuery)
    }
  }
  await Promise.all(Array.from({ length: Math.min(PARALLEL_QUERIES, pending.length) }, worker))
  const ids = new Set<string>()
  for (let rank = 0; lists.some((list) => rank < list.length); rank++) {
    for (const list of lists) if (rank < list.length) ids.add(list[rank] as string)
  }
  return [...ids]
}

/** The agents whose name, tools or instructions hold any of `words` (each counting 1), best first. */
export async function searchAgentIds(db: Kysely<Database>, workspaceId: string, words: string[], limit = CANDIDATES_PER_QUERY): Promise<string[]> {
  return searchAgents(db, workspaceId, [words.map((word) => ({ word, factor: 1 }))], limit)
}

async function bestOnPostgres(db: Kysely<Database>, workspaceId: string, terms: SearchTerm[], limit: number): Promise<string[]> {
  // Terms are letters and digits only: safe inside a tsquery. Weights: A name, B tools, C instructions. One
  // index search per term; a stemmed term counts once (at its highest factor). The workspace is tested inside
  // coalesce() so that the planner does not take it for a selective condition: before the statistics know of
  // many new agents it would otherwise read the whole workspace and test every term on every row.
  const json = JSON.stringify(terms.map((t) => ({ w: t.word, f: t.factor, o: t.nameOnly })))
  const { rows } = await sql<{ agent_id: string }>`
    with given as (
      select to_tsquery('english', t.w) as q, to_tsquery('english', t.w || ':A') as qa, to_tsquery('english', t.w || ':B') as qb, t.f, t.o
      from jsonb_to_recordset(${json}::jsonb) as t(w text, f float8, o boolean)
    ), terms as materialized (
      select distinct on (q::text, o) q, qa, qb, f, o from given where numnode(q) > 0 order by q::text, o, f desc
    )
    select hit.agent_id from terms cross join lateral (
      select agent_id, terms.f * case when document @@ terms.qa then ${sql.lit(NAME_WEIGHT)} when document @@ terms.qb then ${sql.lit(TOOL_WEIGHT)} else ${sql.lit(INSTRUCTION_WEIGHT)} end as score
      from agent_search
      where document @@ terms.q and coalesce(workspace_id = ${workspaceId}, false)
        and (not terms.o or (document @@ terms.qa and length(ts_filter(document, '{b,c}')) = 0))
    ) as hit
    group by hit.agent_id
    order by sum(hit.score) desc, hit.agent_id
    limit ${limit}`.execute(db)
  return rows.map((r) => r.agent_id)
}

async function bestOnSqlite(db: Kysely<Database>, workspaceId: string, terms: SearchTerm[], limit: number): Promise<string[]> {
  // Each term is three disjoint searches — in the name; in the tools and not the name; in the instructions and
  // in neither — so that a term counts once per agent, at its best column. Terms are letters and digits only.
  const arms: Array<[string, number]> = []
  for (const { word, factor, nameOnly } of terms) {
    const term = `"${word}"`
    if (nameOnly) {
      arms.push([`{name} : ${term} AND {name_only} : yes`, factor * NAME_WEIGHT])
      continue
    }
    arms.push([`{name} : ${term}`, factor * NAME_WEIGHT])
    arms.push([`{tools} : ${term} NOT {name} : ${term}`, factor * TOOL_WEIGHT])
    arms.push([`{instructions} : ${term} NOT {name tools} : ${term}`, factor * INSTRUCTION_WEIGHT])
  }
  const json = JSON.stringify(arms)
  readyToRead(db)
  // The index holds every workspace's agents: read the best, then keep this workspace's, reading more if others took places.
  for (let wanted = limit; ; wanted *= 4) {
    const { rows: best } = await sql<{ entry: number }>`
      with arms (query, weight) as materialized (select value ->> 0, value ->> 1 from json_each(${json}))
      select s.rowid as entry from arms join agent_search as s on s.agent_search match arms.query
      group by s.rowid
      order by sum(arms.weight) desc, s.rowid
      limit ${wanted}`.execute(db)
    const { rows } = await sql<{ agent_id: string }>`
      select s.agent_id from json_each(${JSON.stringify(best.map((r) => r.entry))}) as j join agent_search as s on s.rowid = j.value
      where s.workspace_id = ${workspaceId}
      order by j.key`.execute(db)
    if (rows.length >= limit || best.length < wanted) return rows.slice(0, limit).map((r) => r.agent_id)
  }
}
