// Where the run engine appends its events (RUNS.md "Events"), inside the transaction of the change. The event
// log belongs to the events feature: these two functions are the only calls into it.
// Until that feature's log is merged into this branch they record nothing (see README "Runs": events).
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import type { Message } from '../chat/schemas.js'
import type { Run } from './schemas.js'

export async function recordRunEvent(_db: Kysely<Database>, _workspaceId: string, _run: Run, _type: 'run.created' | 'run.updated'): Promise<void> {}

export async function recordMessageEvent(_db: Kysely<Database>, _workspaceId: string, _message: Message): Promise<void> {}
