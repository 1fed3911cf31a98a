// Where the run engine appends its events (docs/runs-and-events.md "Events"), inside the transaction of the change: every run
// change is a `run.updated` (its creation a `run.created`) whose data is the run's summary (summary.ts), not the
// whole document. Messages the engine posts get their `message.created` from the chat store.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { appendEvent } from '../events/store.js'
import type { Run } from './schemas.js'
import { summarize } from './summary.js'

export async function recordRunEvent(db: Kysely<Database>, workspaceId: string, run: Run, type: 'run.created' | 'run.updated', traceparent: string | null): Promise<void> {
  await appendEvent(db, { workspaceId, streamId: run.streamId, type, data: summarize(run), traceparent })
}
