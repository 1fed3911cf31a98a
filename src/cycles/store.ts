// Saved cycle definitions of a stream. Saving appends `cycle.saved`: call it with a transaction.
import { PostgresAdapter, sql, type Expression, type Kysely, type Selectable } from 'kysely'
import type { Database } from '../db/database.js'
import { prepared } from '../db/prepared.js'
import type { CycleTable } from './cycles.table.js'
import { newId, now } from '../ids.js'
import type { CycleDefinition, SavedCycle } from './schemas.js'
import { normalizePolicy, type CyclePolicy } from './policy.js'
import { appendEvent } from '../events/store.js'
import type { CycleA2a } from '../a2a/schemas.js'
import { AGENT_COLUMNS, toAgent } from '../agents/store.js'
import type { Agent } from '../agents/schemas.js'


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
    a2a: row.a2a ? (JSON.parse(row.a2a) as CycleA2a) : null,
    createdAt: row.created_at,
  }
}

export async function insertCycle(db: Kysely<Database>, workspaceId: string, streamId: string, definition: CycleDefinition & { policy?: CyclePolicy; a2a?: CycleA2a }, traceparent: string | null): Promise<SavedCycle> {
  const policy = normalizePolicy(definition.policy)
  const row: CycleRow = {
    id: newId(),
    workspace_id: workspaceId,
    stream_id: streamId,
    trigger_name: definition.triggerName,
    description: definition.description,
    phases: JSON.stringify(definition.phasesTemplate),
    policy: policy && JSON.stringify(policy),
    a2a: definition.a2a ? JSON.stringify(definition.a2a) : null,
    created_at: now(),
  }
  await db.insertInto('cycles').values(row).execute()
  const cycle = toCycle(row)
  await appendEvent(db, { workspaceId, streamId, type: 'cycle.saved', data: cycle, traceparent })
  return cycle
}

// Its columns by name: PostgreSQL prepares (names) only statements without `*` (db/connect.ts).
const CYCLE_COLUMNS = ['id', 'workspace_id', 'stream_id', 'trigger_name', 'description', 'phases', 'policy', 'a2a', 'created_at'] as const satisfies ReadonlyArray<keyof CycleTable>
const selectOne = prepared(3, (db, id: Expression<string>, streamId: Expression<string>, workspaceId: Expression<string>) =>
  db.selectFrom('cycles').select(CYCLE_COLUMNS).where('id', '=', id).where('stream_id', '=', streamId).where('workspace_id', '=', workspaceId),
)

export async function findCycle(db: Kysely<Database>, workspaceId: string, streamId: string, id: string): Promise<SavedCycle | undefined> {
  const [row] = await selectOne(db, id, streamId, workspaceId)
  return row && toCycle(row)
}

// A run's start: the cycle, read by its key with its stream. A cycle of the stream implies the stream (a stream's
// cycles go with it); only when there is none is the stream looked for, to tell "no such stream" from "no such
// cycle" as requireStream then findCycle would. Two lookups of one table each, not a join: on SQLite a join with
// bound parameters is planned again at every run (runs/store.ts, findDeliveryContext).
const selectStream = prepared(2, (db, workspaceId: Expression<string>, streamId: Expression<string>) =>
  db.selectFrom('streams').select('id').where('id', '=', streamId).where('workspace_id', '=', workspaceId),
)

// PostgreSQL: the cycle and the agent of its first phase in one statement (each statement is a round trip), the
// agent as its row's JSON, which its columns' types keep (text, integers, nulls).
const selectOneWithFirstAgent = prepared(3, (db, id: Expression<string>, streamId: Expression<string>, workspaceId: Expression<string>) =>
  db
    .selectFrom('cycles')
    .select(CYCLE_COLUMNS)
    .select(
      sql<string | null>`(select row_to_json(a)::text from (select ${sql.join(AGENT_COLUMNS.map((column) => sql.ref(`agents.${column}`)))} from agents
        where agents.id = (cycles.phases::json -> 0 ->> 'agentId') and agents.workspace_id = cycles.workspace_id) a)`.as('first_agent'),
    )
    .where('id', '=', id)
    .where('stream_id', '=', streamId)
    .where('workspace_id', '=', workspaceId),
)

/**
 * A cycle of a stream: `stream: false` when the stream is not in the workspace, else the cycle if it is the
 * stream's. On PostgreSQL also the agent of its first phase (`firstAgent`, when it exists), which a run's start
 * would read next.
 */
export async function findStreamCycle(
  db: Kysely<Database>,
  workspaceId: string,
  streamId: string,
  cycleId: string,
): Promise<{ stream: boolean; cycle: SavedCycle | undefined; firstAgent?: Agent }> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    const [row] = await selectOneWithFirstAgent(db, cycleId, streamId, workspaceId)
    if (row) {
      const { first_agent, ...cycle } = row
      return { stream: true, cycle: toCycle(cycle), ...(first_agent === null ? {} : { firstAgent: toAgent(JSON.parse(first_agent) as Parameters<typeof toAgent>[0]) }) }
    }
  } else {
    const [row] = await selectOne(db, cycleId, streamId, workspaceId)
    if (row) return { stream: true, cycle: toCycle(row) }
  }
  return { stream: (await selectStream(db, workspaceId, streamId)).length > 0, cycle: undefined }
}

export async function listCycles(db: Kysely<Database>, workspaceId: string, streamId: string, limit: number, after?: string): Promise<SavedCycle[]> {
  let query = db.selectFrom('cycles').selectAll().where('workspace_id', '=', workspaceId).where('stream_id', '=', streamId)
  if (after) query = query.where('id', '>', after)
  const rows = await query.orderBy('id').limit(limit).execute()
  return rows.map(toCycle)
}


/** Sets (or clears, null) the cycle's A2A exposure, with a `cycle.updated` event: call it with a transaction. */
export async function updateCycleA2a(db: Kysely<Database>, workspaceId: string, streamId: string, cycleId: string, a2a: CycleA2a | null, traceparent: string | null): Promise<SavedCycle | undefined> {
  const result = await db.updateTable('cycles').set({ a2a: a2a && JSON.stringify(a2a) }).where('id', '=', cycleId).where('stream_id', '=', streamId).where('workspace_id', '=', workspaceId).executeTakeFirst()
  if (Number(result.numUpdatedRows) === 0) return undefined
  const cycle = await findCycle(db, workspaceId, streamId, cycleId)
  if (cycle) await appendEvent(db, { workspaceId, streamId, type: 'cycle.updated', data: cycle, traceparent })
  return cycle
}
