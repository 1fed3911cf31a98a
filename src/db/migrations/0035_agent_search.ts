// Full-text search over agents for the drafter (issue 14): SQLite FTS5 with the Porter stemmer, or a
// PostgreSQL tsvector with a GIN index; name weighs most, then tools, then instructions. Kept in the same
// transaction as agent writes by src/agents/search.ts. Frozen once landed.
import { PostgresAdapter, sql, type Kysely } from 'kysely'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`
      create table agent_search (
        agent_id text primary key references agents (id) on delete cascade,
        workspace_id text not null,
        document tsvector not null
      )`.execute(db)
    await sql`create index agent_search_document on agent_search using gin (document)`.execute(db)
    await sql`create index agent_search_workspace on agent_search (workspace_id)`.execute(db)
    await sql`
      insert into agent_search (agent_id, workspace_id, document)
      select id, workspace_id,
        setweight(to_tsvector('english', name), 'A') ||
        setweight(to_tsvector('english', translate(tools, '_[]",', '     ')), 'B') ||
        setweight(to_tsvector('english', coalesce(instructions, '')), 'C')
      from agents`.execute(db)
    return
  }
  await sql`
    create virtual table agent_search using fts5(
      agent_id unindexed, workspace_id unindexed, name, tools, instructions,
      tokenize = 'porter unicode61'
    )`.execute(db)
  // `order by rank` is then bm25 with these column weights (cheaper than calling bm25() in the query).
  await sql`insert into agent_search (agent_search, rank) values ('rank', 'bm25(0.0, 0.0, 10.0, 3.0, 1.0)')`.execute(db)
  // Which entry is an agent's, so that rewriting or dropping it needs no scan of the index.
  await sql`create table agent_search_keys (agent_id text primary key, search_rowid integer not null)`.execute(db)
  await sql`
    insert into agent_search (agent_id, workspace_id, name, tools, instructions)
    select id, workspace_id, name, replace(replace(replace(replace(replace(tools, '_', ' '), '[', ' '), ']', ' '), '"', ' '), ',', ' '), coalesce(instructions, '')
    from agents`.execute(db)
  await sql`insert into agent_search_keys (agent_id, search_rowid) select agent_id, rowid from agent_search`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) await sql`drop table agent_search_keys`.execute(db)
  await sql`drop table agent_search`.execute(db)
}
