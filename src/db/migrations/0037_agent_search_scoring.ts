// The agents' search index (0035), made for scoring every matching agent in the database and for finding
// agents by name (issue 14, src/agents/search.ts). Frozen once landed: it reads names with its own copy of the
// drafter's tokenising, as it was when this landed.
// - Each entry holds what the drafter's scorer reads of an agent (the first 4000 characters of its
//   instructions, its first 50 tools of 200 characters), so that the index scores agents as the scorer does.
// - Names: each entry keeps the agent's name as the drafter reads it (lower-case words, possessive 's dropped)
//   and its first two words, indexed by workspace, so that the agents a prompt names are found exactly — in
//   SQLite in agent_search_keys, in PostgreSQL in agent_search.
// - SQLite: the full-text index gains a column `name_only`, "yes" for an agent with neither instructions nor
//   tools (the drafter reads the agentive nouns of such an agent's name as verbs), so that a search can keep to
//   those agents without reading each match's text. FTS5 tables cannot gain columns: the index is built anew.
// - PostgreSQL: the GIN index is written directly. With its default fast update, new entries wait in a pending
//   list that every search reads through until a vacuum merges it; after 20,000 agents were created, each term
//   looked up cost milliseconds. Agent writes are rare and drafts frequent.
import { PostgresAdapter, sql, type Kysely } from 'kysely'

const nameWords = (name: string) =>
  (name.toLowerCase().match(/@?[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu) ?? []).map((w) => w.replace(/['’]s$/i, ''))
// What the scorer reads of an agent: 4000 characters of instructions, 50 tools of 200 characters.
const scoredInstructions = (instructions: string | null) => (instructions ?? '').slice(0, 4000)
const scoredTools = (tools: string) => (JSON.parse(tools) as string[]).slice(0, 50).map((t) => t.slice(0, 200)).join(' ').replace(/_/g, ' ')

interface AgentRow {
  id: string
  workspace_id: string
  name: string
  instructions: string | null
  tools: string
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  const agents = (await sql<AgentRow>`select id, workspace_id, name, instructions, tools from agents`.execute(db)).rows
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`alter index agent_search_document set (fastupdate = off)`.execute(db)
    // What already waits in the pending list goes into the index now.
    await sql`select gin_clean_pending_list('agent_search_document'::regclass)`.execute(db)
    await sql`alter table agent_search add column name_start text not null default '', add column name_words text not null default ''`.execute(db)
    for (const agent of agents) {
      const words = nameWords(agent.name)
      await sql`
        update agent_search set
          document = setweight(to_tsvector('english', ${agent.name}), 'A') ||
            setweight(to_tsvector('english', ${scoredTools(agent.tools)}), 'B') ||
            setweight(to_tsvector('english', ${scoredInstructions(agent.instructions)}), 'C'),
          name_start = ${words.slice(0, 2).join(' ')}, name_words = ${words.join(' ')}
        where agent_id = ${agent.id}`.execute(db)
    }
    await sql`create index agent_search_name on agent_search (workspace_id, name_start)`.execute(db)
    return
  }
  await sql`drop table agent_search`.execute(db)
  await sql`drop table agent_search_keys`.execute(db)
  await sql`
    create virtual table agent_search using fts5(
      agent_id unindexed, workspace_id unindexed, name, tools, instructions, name_only,
      tokenize = 'porter unicode61'
    )`.execute(db)
  await sql`
    create table agent_search_keys (
      agent_id text primary key, search_rowid integer not null, workspace_id text not null, name_start text not null, name_words text not null
    )`.execute(db)
  for (const agent of agents) {
    const nameOnly = !agent.instructions && agent.tools === '[]' ? 'yes' : ''
    await sql`
      insert into agent_search (agent_id, workspace_id, name, tools, instructions, name_only)
      values (${agent.id}, ${agent.workspace_id}, ${agent.name}, ${scoredTools(agent.tools)}, ${scoredInstructions(agent.instructions)}, ${nameOnly})`.execute(db)
    const words = nameWords(agent.name)
    await sql`
      insert into agent_search_keys (agent_id, search_rowid, workspace_id, name_start, name_words)
      values (${agent.id}, last_insert_rowid(), ${agent.workspace_id}, ${words.slice(0, 2).join(' ')}, ${words.join(' ')})`.execute(db)
  }
  await sql`create index agent_search_keys_name on agent_search_keys (workspace_id, name_start)`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`drop index agent_search_name`.execute(db)
    await sql`alter table agent_search drop column name_start, drop column name_words`.execute(db)
    await sql`alter index agent_search_document reset (fastupdate)`.execute(db)
    return
  }
  await sql`drop table agent_search`.execute(db)
  await sql`drop table agent_search_keys`.execute(db)
  await sql`
    create virtual table agent_search using fts5(
      agent_id unindexed, workspace_id unindexed, name, tools, instructions,
      tokenize = 'porter unicode61'
    )`.execute(db)
  await sql`insert into agent_search (agent_search, rank) values ('rank', 'bm25(0.0, 0.0, 10.0, 3.0, 1.0)')`.execute(db)
  await sql`create table agent_search_keys (agent_id text primary key, search_rowid integer not null)`.execute(db)
  await sql`
    insert into agent_search (agent_id, workspace_id, name, tools, instructions)
    select id, workspace_id, name, replace(replace(replace(replace(replace(tools, '_', ' '), '[', ' '), ']', ' '), '"', ' '), ',', ' '), coalesce(instructions, '')
    from agents`.execute(db)
  await sql`insert into agent_search_keys (agent_id, search_rowid) select agent_id, rowid from agent_search`.execute(db)
}
