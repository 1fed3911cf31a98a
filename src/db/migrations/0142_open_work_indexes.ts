// Indexes of the work still open, so that what reads it costs what is open, not what was ever done. /metrics
// counts, at every scrape, the tasks handed out and not answered, the runs awaiting a decision, the tool calls
// awaiting approval and the questions awaiting an answer; each of those counts scanned its whole table (or a full
// index of it), which on a million runs took a scrape over a second, and on SQLite held the one connection that
// long. Each index below holds only the rows in that state (partial), so a row enters it when its wait begins and
// leaves when it ends, and work that never waits never touches it. `run_tasks_open` also serves the agents' claim
// of their oldest open task, and replaces `run_tasks_claim`, which held every task ever made and moved its entry
// at every task's close; `runs_waiting` also serves a start-up's re-arming of the decision clocks, which read the
// runs in id order to find the waiting ones. Frozen once landed.
import { sql, type Kysely } from 'kysely'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('run_tasks_claim').execute()
  await sql`create index run_tasks_open on run_tasks (agent_id, delivery, id) where state = 'open'`.execute(db)
  await sql`create index runs_waiting on runs (id) where status = 'waiting'`.execute(db)
  await sql`create index tool_calls_awaiting_approval on tool_calls (id) where status = 'awaiting_approval'`.execute(db)
  await sql`create index tool_calls_asking on tool_calls (id) where name = 'tandem.ask_operator' and status = 'running' and finished_at is null`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const index of ['tool_calls_asking', 'tool_calls_awaiting_approval', 'runs_waiting', 'run_tasks_open']) await db.schema.dropIndex(index).execute()
  await db.schema.createIndex('run_tasks_claim').on('run_tasks').columns(['agent_id', 'state', 'delivery', 'id']).execute()
}
