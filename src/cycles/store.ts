// Saved cycle definitions of a stream. Saving appends `cycle.saved`: call it with a transaction.
import type { Expression, Kysely, Selectable } from 'kysely'
import type { Database } from '../db/database.js'
import { prepared } from '../db/prepared.js'
import type { CycleTable } from './cycles.table.js'
import { newId, now } from '../ids.js'
import type { CycleDefinition, SavedCycle } from './schemas.js'
import { normalizePolicy, type CyclePolicy } from './policy.js'
import { appendEvent } from '../events/store.js'


type CycleRow = Selectable<CycleTable>

export function toCycle(row: CycleRow): SavedCycle {
  return {
    id: row.id,
    streamId: row.stream_id,
    triggerName: row.trigger_name,
    description: row.description,
    phasesTemplate: JSON.parse(row.phases),
    // Present only when the cycle has one, so a cycle without a policy reads as before 0061.
    ...(row.policy ? { policy: JSON.parse(row.policy) as CyclePolicy } : {}),
    createdAt: row.created_at,
  }
}

export async function insertCycle(db: Kysely<Database>, workspaceId: string, streamId: string, definition: CycleDefinition & { policy?: CyclePolicy }, traceparent: string | null): Promise<SavedCycle> {
  const policy = normalizePolicy(definition.policy)
  const row: CycleRow = {
    id: newId(),
    workspace_id: workspaceId,
    stream_id: streamId,
    trigger_name: definition.triggerName,
    description: definition.description,
    phases: JSON.stringify(definition.phasesTemplate),
    policy: policy && JSON.stringify(policy),
    created_at: now(),
  }
  await db.insertInto('cycles').values(row).execute()
  const cycle = toCycle(row)
  await appendEvent(db, { workspaceId, streamId, type: 'cycle.saved', data: cycle, traceparent })
  return cycle
}

const selectOne = prepared(3, (db, id: Expression<string>, streamId: Expression<string>, workspaceId: Expression<string>) =>
  db.selectFrom('cycles').selectAll().where('id', '=', id).where('stream_id', '=', streamId).where('workspace_id', '=', workspaceId),
)

export async function findCycle(db: Kysely<Database>, workspaceId: string, streamId: string, id: string): Promise<SavedCycle | undefined> {
  const [row] = await selectOne(db, id, streamId, workspaceId)
  return row && toCycle(row)
}

export async function listCycles(db: Kysely<Database>, workspaceId: string, streamId: string, limit: number, after?: string): Promise<SavedCycle[]> {
  let query = db.selectFrom('cycles').selectAll().where('workspace_id', '=', workspaceId).where('stream_id', '=', streamId)
  if (after) query = query.where('id', '>', after)
  const rows = await query.orderBy('id').limit(limit).execute()
  return rows.map(toCycle)
}

