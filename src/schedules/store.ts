// Schedule storage: rows of `schedules`, converted to the API's shape in one place.
import { PostgresAdapter, type Kysely, type Selectable } from 'kysely'
import type { Database } from '../db/database.js'
import type { ScheduleTable } from '../triggers/operators.table.js'
import type { Schedule } from './schemas.js'

export type ScheduleRow = Selectable<ScheduleTable>

export function toSchedule(row: ScheduleRow): Schedule {
  return {
    id: row.id,
    streamId: row.stream_id,
    triggerName: row.trigger_name,
    cron: row.cron,
    timezone: row.timezone,
    input: JSON.parse(row.input) as Record<string, unknown>,
    enabled: Number(row.enabled) === 1,
    nextRunAt: row.next_run_at,
    lastRunAt: row.last_run_at,
    createdBy: row.created_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

export async function findScheduleRow(db: Kysely<Database>, workspaceId: string, id: string): Promise<ScheduleRow | undefined> {
  return db.selectFrom('schedules').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst()
}

export async function listScheduleRows(db: Kysely<Database>, workspaceId: string, streamId: string, limit: number, after?: string): Promise<ScheduleRow[]> {
  let query = db.selectFrom('schedules').selectAll().where('workspace_id', '=', workspaceId).where('stream_id', '=', streamId)
  if (after) query = query.where('id', '>', after)
  return query.orderBy('id').limit(limit).execute()
}

/** The row, locked for the caller's transaction on PostgreSQL (SQLite transactions already run one at a time). */
export async function lockScheduleRow(db: Kysely<Database>, workspaceId: string, id: string): Promise<ScheduleRow | undefined> {
  const query = db.selectFrom('schedules').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId)
  return (db.getExecutor().adapter instanceof PostgresAdapter ? query.forUpdate() : query).executeTakeFirst()
}
