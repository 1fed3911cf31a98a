// Run and task storage. A run is stored whole as the document GET returns (the state machine writes it, in
// one place: machine.ts `persistRun`); `status` is a column beside it for the list filter. Tasks are rows of
// their own: claims and results find them by id or by agent.
import { PostgresAdapter, sql, type Insertable, type Kysely, type QueryCreator, type RawBuilder, type Selectable, type Expression } from 'kysely'
import type { Database } from '../db/database.js'
import { prepared, rawStatement } from '../db/prepared.js'
import { columnsOf } from '../db/columns.js'
import { keptOrMade } from '../kept.js'
import { sqliteDriverOf } from '../db/sqlite-driver.js'
import { addJobArgs, addJobCall, enqueueJobs, jobsInSql, removeJobs, removeJobsSql, type JobSpec } from '../jobs/index.js'
import { toCycle } from '../cycles/store.js'
import { AGENT_COLUMNS } from '../agents/store.js'
import { RECENT_MESSAGES, type RecentMessage } from '../chat/store.js'
import type { SavedCycle } from '../cycles/schemas.js'
import type { Run, RunStatus } from './schemas.js'
import type { RunTable, RunTaskTable, TaskState } from './runs.table.js'

export type { RunTable, RunTaskTable, TaskState }




export type TaskRow = Selectable<RunTaskTable>

const isPostgres = (db: Kysely<Database>) => db.getExecutor().adapter instanceof PostgresAdapter

const RUN_ARITY = 10
const runValues = (args: ReadonlyArray<Expression<unknown>>) => {
  const [id, workspace_id, stream_id, status, document, traceparent, created_at, trigger_kind, trigger_id, depth] = args
  return { id, workspace_id, stream_id, status, document, traceparent, created_at, trigger_kind, trigger_id, depth } as never
}
const insertRow = prepared<unknown[], never>(RUN_ARITY, (db, ...args: Array<Expression<unknown>>) => db.insertInto('runs').values(runValues(args)))

/** A new run's first task and its jobs, written with the run's row (insertRun). */
export interface FirstTask {
  task: NewTask
  jobs: JobSpec[]
}

/**
 * Writes a new run's row, then its first tasks (`tasks`, each as insertTask writes it). PostgreSQL: a run with one
 * task that adds jobs is one statement (insertRunWithTask).
 */
export async function insertRun(db: Kysely<Database>, workspaceId: string, run: Run, traceparent: string | null, tasks: readonly FirstTask[] = []): Promise<void> {
  const values = [run.id, workspaceId, run.streamId, run.status, JSON.stringify(run), traceparent, run.createdAt, run.trigger.kind, run.trigger.id, run.depth]
  const [first] = tasks
  if (first && tasks.length === 1 && first.jobs.length > 0 && jobsInSql(db)) {
    await insertRunWithTask(first.jobs.length)(db, ...values, ...taskValues(first.task), ...first.jobs.flatMap(({ name, payload, options }) => addJobArgs(name, payload, options)))
    return
  }
  await insertRow(db, ...values)
  for (const { task, jobs } of tasks) await insertTask(db, task, jobs)
}

const updateRow = prepared(3, (db, status: Expression<RunStatus>, document: Expression<string>, id: Expression<string>) => db.updateTable('runs').set({ status, document }).where('id', '=', id))

export async function updateRun(db: Kysely<Database>, run: Run): Promise<void> {
  await updateRow(db, run.status, JSON.stringify(run), run.id)
}

const selectOne = prepared(2, (db, id: Expression<string>, workspaceId: Expression<string>) =>
  db.selectFrom('runs').select(['document']).where('id', '=', id).where('workspace_id', '=', workspaceId),
)
// A locked run comes with whether a step-0 tool call (the task tool route's, ElevenLabs client tools') was ever
// made in it (0070 route_calls): only then can a phase that ends leave one in flight to settle (tool-calls/store.ts
// settleEndedCalls), so a run without tools asks nothing more. A column of the locked row, so PostgreSQL's
// FOR UPDATE reads its latest value.
const lockedRun = (db: Kysely<Database>, id: Expression<string>) => db.selectFrom('runs').select(['document', 'workspace_id', 'traceparent', 'route_calls']).where('id', '=', id)
const selectOneForUpdate = prepared(1, (db, id: Expression<string>) => lockedRun(db, id).forUpdate())
const selectOneById = prepared(1, (db, id: Expression<string>) => lockedRun(db, id))

export async function findRun(db: Kysely<Database>, workspaceId: string, id: string): Promise<Run | undefined> {
  const [row] = await selectOne(db, id, workspaceId)
  return row && (JSON.parse(row.document) as Run)
}

/**
 * The run, locked for the rest of the caller's transaction (PostgreSQL: FOR UPDATE; SQLite: transactions
 * already run one at a time), so that of two concurrent transitions the second sees the first's outcome;
 * with its trace context, which every later transition of the run continues.
 */
export async function lockRun(db: Kysely<Database>, id: string): Promise<{ run: Run; workspaceId: string; traceparent: string | null; routeCalls: boolean } | undefined> {
  const [row] = isPostgres(db) ? await selectOneForUpdate(db, id) : await selectOneById(db, id)
  return row && { run: JSON.parse(row.document) as Run, workspaceId: row.workspace_id, traceparent: row.traceparent, routeCalls: Number(row.route_calls) === 1 }
}

// A delivery's reads: the run, its stream's name, its cycle's description, the task's agent and the agent's
// credential (sealed). The cycle's id is in the run's document only.
// PostgreSQL: one query with joins (each statement is a round trip). SQLite: two queries, each over one table
// with the others as scalar subqueries. better-sqlite3 builds SQLite with STAT4, under which a statement whose
// parameters meet an index in a join is planned again at every run once its parameters are bound (sqlite3_prepare
// docs: "the statement will be automatically recompiled"), which made the five-table join cost 120–140 µs per
// delivery; lookups of one row by key over one table take SQLite's planner short cut and cost a few µs each.
const deliveryContextQuery = (db: Kysely<Database>, runId: Expression<string>, workspaceId: Expression<string>, agentId: Expression<string>) => {
  const cycleId = sql<string>`(runs.document::json ->> 'cycleId')`
  return db
    .selectFrom('runs')
    .leftJoin('streams', (join) => join.onRef('streams.id', '=', 'runs.stream_id').onRef('streams.workspace_id', '=', 'runs.workspace_id'))
    .leftJoin('cycles', (join) => join.on('cycles.id', '=', cycleId).onRef('cycles.workspace_id', '=', 'runs.workspace_id'))
    .leftJoin('agents', (join) => join.on('agents.id', '=', agentId).onRef('agents.workspace_id', '=', 'runs.workspace_id'))
    .leftJoin('credentials', (join) => join.onRef('credentials.id', '=', 'agents.credential_id').onRef('credentials.workspace_id', '=', 'runs.workspace_id'))
    .select(AGENT_COLUMNS.map((column) => `agents.${column}` as const))
    .select(['runs.document as run_document', 'streams.name as stream_name', 'cycles.description as cycle_description', 'credentials.id as credential_row_id', 'credentials.key_id as credential_key_id', 'credentials.ciphertext as credential_ciphertext'])
    // The stream's latest messages, oldest first, as the task's payload lists them (chat/store.ts listRecentMessageSummaries).
    .select(
      sql<string>`(select coalesce(json_agg(json_build_object('id', m.id, 'authorId', m.author_id, 'authorType', m.author_type, 'text', m.text, 'createdAt', m.created_at) order by m.id), '[]')::text
        from (select id, author_id, author_type, text, created_at from messages where workspace_id = runs.workspace_id and stream_id = runs.stream_id order by id desc limit ${sql.lit(RECENT_MESSAGES)}) m)`.as('recent_messages'),
    )
    .where('runs.id', '=', runId)
    .where('runs.workspace_id', '=', workspaceId)
}
const selectDeliveryContext = prepared(3, deliveryContextQuery)
const selectRunContext = prepared(2, (db, runId: Expression<string>, workspaceId: Expression<string>) =>
  db
    .selectFrom('runs')
    .select((eb) => [
      'runs.document as run_document',
      eb.selectFrom('streams').select('streams.name').whereRef('streams.id', '=', 'runs.stream_id').whereRef('streams.workspace_id', '=', 'runs.workspace_id').as('stream_name'),
      eb
        .selectFrom('cycles')
        .select('cycles.description')
        .where('cycles.id', '=', sql<string>`json_extract(runs.document, '$.cycleId')`)
        .whereRef('cycles.workspace_id', '=', 'runs.workspace_id')
        .as('cycle_description'),
    ])
    .where('runs.id', '=', runId)
    .where('runs.workspace_id', '=', workspaceId),
)
const selectAgentContext = prepared(2, (db, agentId: Expression<string>, workspaceId: Expression<string>) =>
  db
    .selectFrom('agents')
    .select(AGENT_COLUMNS.map((column) => `agents.${column}` as const))
    .select((eb) => {
      const credential = (column: 'id' | 'key_id' | 'ciphertext') =>
        eb.selectFrom('credentials').select(`credentials.${column}`).whereRef('credentials.id', '=', 'agents.credential_id').whereRef('credentials.workspace_id', '=', 'agents.workspace_id')
      return [credential('id').as('credential_row_id'), credential('key_id').as('credential_key_id'), credential('ciphertext').as('credential_ciphertext')]
    })
    .where('agents.id', '=', agentId)
    .where('agents.workspace_id', '=', workspaceId),
)

export interface DeliveryContext {
  run: Run
  streamName: string | null
  cycleDescription: string | null
  /** The agent's row; undefined when it no longer exists. */
  agent: Selectable<Database['agents']> | undefined
  /** The agent's credential, sealed; undefined when the agent names none or it no longer exists. */
  credential: { id: string; keyId: string; ciphertext: string } | undefined
  /** PostgreSQL: the stream's latest messages as the payload lists them, read in the same statement (SQLite: read by the payload). */
  recentMessages?: RecentMessage[]
}

/** The columns of the delivery's reads (deliveryContextQuery's). */
const CONTEXT_COLUMNS = [...AGENT_COLUMNS, 'run_document', 'stream_name', 'cycle_description', 'credential_row_id', 'credential_key_id', 'credential_ciphertext', 'recent_messages'] as const
/** A row of the delivery's reads, as either database's queries give it (its agent columns null when the agent is gone). */
type DeliveryContextRow = Record<(typeof AGENT_COLUMNS)[number], unknown> & Record<Exclude<(typeof CONTEXT_COLUMNS)[number], (typeof AGENT_COLUMNS)[number]>, string | null>

/** What delivering a task reads; undefined when the run does not exist (in that workspace). */
export async function findDeliveryContext(db: Kysely<Database>, runId: string, workspaceId: string, agentId: string): Promise<DeliveryContext | undefined> {
  let row
  if (isPostgres(db)) [row] = await selectDeliveryContext(db, runId, workspaceId, agentId)
  else {
    const [runRow] = await selectRunContext(db, runId, workspaceId)
    if (!runRow) return undefined
    const [agentRow] = await selectAgentContext(db, agentId, workspaceId)
    row = { ...runRow, ...(agentRow ?? { id: null, credential_row_id: null, credential_key_id: null, credential_ciphertext: null }), recent_messages: null }
  }
  return row && toDeliveryContext(row as DeliveryContextRow)
}

function toDeliveryContext(row: DeliveryContextRow): DeliveryContext | undefined {
  const { run_document, stream_name, cycle_description, credential_row_id, credential_key_id, credential_ciphertext, recent_messages, ...agent } = row
  if (run_document === null) return undefined
  return {
    ...(recent_messages === null ? {} : { recentMessages: JSON.parse(recent_messages) as RecentMessage[] }),
    run: JSON.parse(run_document) as Run,
    streamName: stream_name,
    cycleDescription: cycle_description,
    agent: agent.id === null ? undefined : (agent as Selectable<Database['agents']>),
    credential: credential_row_id && credential_key_id !== null && credential_ciphertext !== null ? { id: credential_row_id, keyId: credential_key_id, ciphertext: credential_ciphertext } : undefined,
  }
}

export async function listRuns(
  db: Kysely<Database>,
  workspaceId: string,
  streamId: string,
  options: { status?: RunStatus; limit: number; after?: string; desc?: boolean },
): Promise<Run[]> {
  let query = db.selectFrom('runs').select('document').where('workspace_id', '=', workspaceId).where('stream_id', '=', streamId)
  if (options.status) query = query.where('status', '=', options.status)
  if (options.after) query = query.where('id', options.desc ? '<' : '>', options.after)
  const rows = await query.orderBy('id', options.desc ? 'desc' : 'asc').limit(options.limit).execute()
  return rows.map((row) => JSON.parse(row.document) as Run)
}

/** A new task: every column the state machine gives one (the others keep their defaults). */
export type NewTask = Omit<Insertable<RunTaskTable>, 'past_token_hashes' | 'usage'>

// A new task's columns, in the order insertTaskRow and taskWithJobs take them.
const NEW_TASK_COLUMNS = [
  'id', 'workspace_id', 'run_id', 'phase_run_id', 'agent_id', 'attempt', 'feedback', 'delivery', 'state', 'token_hash', 'lease_until', 'created_at', 'closed_at', 'traceparent',
] as const satisfies ReadonlyArray<keyof NewTask>
const newTaskValues = (args: ReadonlyArray<Expression<unknown>>) => Object.fromEntries(NEW_TASK_COLUMNS.map((column, i) => [column, args[i]])) as never
const insertTaskRow = prepared<unknown[], never>(NEW_TASK_COLUMNS.length, (db, ...args: Array<Expression<unknown>>) => db.insertInto('run_tasks').values(newTaskValues(args)))

// PostgreSQL: a new task and its jobs in one statement, the jobs added by the select over the inserted row (a select
// list is evaluated left to right: in order); a new run's row can come first in it, as a statement of the WITH (the
// task refers to the row: the reference is checked at the statement's end, when both rows exist). Compiled once per
// number of jobs, like every hot statement (db/prepared.ts); the engine adds one job with a task, and at most SHAPES
// counts are kept.
const JOB_ARITY = 5
const SHAPES = 8
const taskWithJobsQuery = (db: Kysely<Database>, from: QueryCreator<Database>, task: ReadonlyArray<Expression<unknown>>, jobArgs: ReadonlyArray<Expression<unknown>>) => {
  const adds = Array.from({ length: jobArgs.length / JOB_ARITY }, (_, j) => addJobCall(db, jobArgs.slice(JOB_ARITY * j, JOB_ARITY * (j + 1)))!)
  return from
    .with('task', (qc) => qc.insertInto('run_tasks').values(newTaskValues(task)).returning('id'))
    .selectFrom('task')
    .select(adds.map((add, i) => add.as(`job_${i}`))) as never
}
const taskWithJobs = new Map<number, ReturnType<typeof prepared<unknown[], never>>>()
const insertTaskWithJobs = (jobs: number) =>
  keptOrMade(taskWithJobs, jobs, SHAPES, () =>
    prepared<unknown[], never>(NEW_TASK_COLUMNS.length + JOB_ARITY * jobs, (db, ...args: Array<Expression<unknown>>) =>
      taskWithJobsQuery(db, db, args.slice(0, NEW_TASK_COLUMNS.length), args.slice(NEW_TASK_COLUMNS.length)),
    ),
  )
const runWithTask = new Map<number, ReturnType<typeof prepared<unknown[], never>>>()
const insertRunWithTask = (jobs: number) =>
  keptOrMade(runWithTask, jobs, SHAPES, () =>
    prepared<unknown[], never>(RUN_ARITY + NEW_TASK_COLUMNS.length + JOB_ARITY * jobs, (db, ...args: Array<Expression<unknown>>) =>
      taskWithJobsQuery(
        db,
        db.with('run', (qc) => qc.insertInto('runs').values(runValues(args.slice(0, RUN_ARITY))).returning('id')) as unknown as QueryCreator<Database>,
        args.slice(RUN_ARITY, RUN_ARITY + NEW_TASK_COLUMNS.length),
        args.slice(RUN_ARITY + NEW_TASK_COLUMNS.length),
      ),
    ),
  )

/** A new task's values, in NEW_TASK_COLUMNS' order. */
function taskValues(task: NewTask): unknown[] {
  const row: Record<(typeof NEW_TASK_COLUMNS)[number], unknown> = {
    id: task.id, workspace_id: task.workspace_id, run_id: task.run_id, phase_run_id: task.phase_run_id, agent_id: task.agent_id, attempt: task.attempt,
    feedback: task.feedback ?? null, delivery: task.delivery, state: task.state, token_hash: task.token_hash ?? null, lease_until: task.lease_until ?? null,
    created_at: task.created_at, closed_at: task.closed_at ?? null, traceparent: task.traceparent ?? null,
  }
  return NEW_TASK_COLUMNS.map((column) => row[column])
}

/** Writes a new task and adds its jobs (`jobs`, as enqueueJobs): one statement on PostgreSQL. */
export async function insertTask(db: Kysely<Database>, task: NewTask, jobs: JobSpec[] = []): Promise<void> {
  const values = taskValues(task)
  if (jobs.length > 0 && jobsInSql(db)) {
    await insertTaskWithJobs(jobs.length)(db, ...values, ...jobs.flatMap(({ name, payload, options }) => addJobArgs(name, payload, options)))
    return
  }
  await insertTaskRow(db, ...values)
  await enqueueJobs(db, jobs)
}

const TASK_COLUMNS = columnsOf<RunTaskTable>({
  id: true, workspace_id: true, run_id: true, phase_run_id: true, agent_id: true, attempt: true, feedback: true, delivery: true, state: true, token_hash: true,
  past_token_hashes: true, lease_until: true, created_at: true, closed_at: true, traceparent: true, usage: true, clock_paused_ms: true, clock_paused_at: true,
})
/** A task's columns in raw SQL (`of`: the table or query they are read from). */
const taskColumns = (of: string) => sql.join(TASK_COLUMNS.map((column) => sql.ref(`${of}.${column}`)))
const selectTask = prepared(1, (db, id: Expression<string>) => db.selectFrom('run_tasks').select(TASK_COLUMNS).where('id', '=', id))

export async function findTask(db: Kysely<Database>, id: string): Promise<TaskRow | undefined> {
  const [row] = await selectTask(db, id)
  return row
}

/** Closes the task if it is still open; false when it was not (another answer or a cancel came first). */
const closeTaskQuery = (db: QueryCreator<Database>, id: Expression<string>, state: Expression<Exclude<TaskState, 'open'>>, at: Expression<string>) =>
  db.updateTable('run_tasks').set({ state, closed_at: at, lease_until: null }).where('id', '=', id).where('state', '=', 'open').returning('id')
const closeTaskRow = prepared(3, closeTaskQuery)

// PostgreSQL: the task closed and its jobs removed in one statement, compiled once per number of job keys (the
// engine passes two; at most SHAPES counts are kept).
const closeWithRemovals = new Map<number, ReturnType<typeof prepared<unknown[], { id: string }>>>()
const closeTaskRemoving = (keys: number) =>
  keptOrMade(closeWithRemovals, keys, SHAPES, () =>
    prepared<unknown[], { id: string }>(3 + keys, (db, id, state, at, ...jobKeys) =>
      db
        .with('closed', (qc) => closeTaskQuery(qc, id as Expression<string>, state as Expression<Exclude<TaskState, 'open'>>, at as Expression<string>))
        .selectFrom('closed')
        .select(removeJobsSql(db, jobKeys as Array<Expression<string>>)!.map((removal, i) => removal.as(`removed_${i}`))) as never,
    ),
  )

/**
 * Closes the task if it is still open and drops its pending jobs (`jobKeys`: its time-out, a delivery still
 * waiting), which are no longer due; false, removing nothing, when it was not open. One statement on PostgreSQL.
 */
export async function closeTask(db: Kysely<Database>, id: string, state: Exclude<TaskState, 'open'>, at: string, jobKeys: string[]): Promise<boolean> {
  if (jobKeys.length > 0 && jobsInSql(db)) return (await closeTaskRemoving(jobKeys.length)(db, id, state, at, ...jobKeys)).length > 0
  if ((await closeTaskRow(db, id, state, at)).length === 0) return false
  await removeJobs(db, jobKeys)
  return true
}

/** Closes every open task of a run (a cancel, a failure); returns their ids. */
export async function closeOpenTasks(db: Kysely<Database>, runId: string, state: Exclude<TaskState, 'open'>, at: string): Promise<string[]> {
  const rows = await db
    .updateTable('run_tasks')
    .set({ state, closed_at: at, lease_until: null })
    .where('run_id', '=', runId)
    .where('state', '=', 'open')
    .returning('id')
    .execute()
  return rows.map((row) => row.id)
}

// leaseOpenTask's statement: the open task read and, if no one holds its lease, the lease taken; with what its
// delivery reads (findDeliveryContext's query, on the task's run and agent), so that a delivery on PostgreSQL
// begins with one round trip, not two. The task's columns come prefixed: the agent's row has columns of the same names.
const TASK_PREFIX = 'task_'
type LeaseRow = { [C in (typeof TASK_COLUMNS)[number] as `task_${C}`]: TaskRow[C] } & DeliveryContextRow & { leased: boolean }
const leaseTask = prepared(3, (db, id: Expression<string>, at: Expression<string>, until: Expression<string>) =>
  rawStatement(
    db,
    sql<LeaseRow>`with task as (
    select ${taskColumns('run_tasks')} from run_tasks where id = ${id} and state = 'open'
  ), leased as (
    update run_tasks set lease_until = ${until}
    where id in (select id from task) and state = 'open' and (lease_until is null or lease_until <= ${at})
    returning id
  )
  select ${sql.join(TASK_COLUMNS.map((column) => sql`${sql.ref(`task.${column}`)} as ${sql.ref(TASK_PREFIX + column)}`))}, exists (select 1 from leased) as leased,
    ${sql.join(CONTEXT_COLUMNS.map((column) => sql.ref(`context.${column}`)))}
  from task left join lateral ${deliveryContextQuery(db, sql.ref<string>('task.run_id'), sql.ref<string>('task.workspace_id'), sql.ref<string>('task.agent_id'))} as context on true`,
  ),
)

/** The lease statement's row: the task, whether it was leased, and the delivery's reads. */
function fromLeaseRow(row: LeaseRow): { task: TaskRow; leased: boolean; context: DeliveryContext | null } {
  const task = Object.fromEntries(TASK_COLUMNS.map((column) => [column, row[`${TASK_PREFIX}${column}`]])) as TaskRow
  const context = Object.fromEntries(CONTEXT_COLUMNS.map((column) => [column, row[column]])) as DeliveryContextRow
  return { task, leased: row.leased === true, context: toDeliveryContext(context) ?? null }
}

/**
 * PostgreSQL: deliverTask's first statement. Reads the task if it is open; if so, takes its delivery lease until
 * `until` (one instance delivers a task at a time: not when another instance holds an unexpired lease). A lease
 * taken adds no job: its commit sends no NOTIFY, and if this instance dies its job is freed by a live one
 * (src/failover/registry.ts), which finds the lease held and adds the watchdog then. A lease taken comes with
 * the delivery's reads (`context`, findDeliveryContext's, null when the run is gone), as of the same statement.
 *
 * Only when the lease looks held, `watchdog()` (an add_job call, jobs/index.ts addJobSql) is added to look again
 * once it ends, decided again on the locked row (watchOrLease). The first statement saw the row as of its start:
 * a holder that released the lease and queued its next look just after would otherwise find that look replaced by
 * the watchdog, a lease's length later. `task` is undefined when the task is missing or closed (no watchdog then).
 */
export async function leaseOpenTask(
  db: Kysely<Database>,
  id: string,
  at: string,
  until: string,
  watchdog: () => RawBuilder<unknown>,
): Promise<{ task: TaskRow | undefined; leased: boolean; context?: DeliveryContext | null }> {
  const [row] = await leaseTask(db, id, at, until)
  if (!row) return { task: undefined, leased: false }
  const { task, leased, context } = fromLeaseRow(row)
  if (leased) return { task: { ...task, lease_until: until }, leased: true, context }
  return watchOrLease(db, id, at, until, watchdog)
}

/**
 * The lease looked held: on the task's row, locked, either the lease is free by now (its holder released it
 * meanwhile) and is taken, or the watchdog is added while the row stays locked. Every release updates this row
 * before it queues or removes the task's delivery job, so it waits for this transaction and then replaces or removes
 * the watchdog: the watchdog never outlives a release it did not see.
 */
async function watchOrLease(db: Kysely<Database>, id: string, at: string, until: string, watchdog: () => RawBuilder<unknown>): Promise<{ task: TaskRow | undefined; leased: boolean }> {
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<TaskRow>`select * from run_tasks where id = ${id} and state = 'open' for update`.execute(trx)
    const [task] = rows
    if (!task) return { task: undefined, leased: false }
    if (task.lease_until === null || task.lease_until <= at) {
      await trx.updateTable('run_tasks').set({ lease_until: until }).where('id', '=', id).execute()
      return { task: { ...task, lease_until: until }, leased: true }
    }
    await sql`select ${watchdog()}`.execute(trx)
    return { task, leased: false }
  })
}

export async function releaseTaskLease(db: Kysely<Database>, id: string): Promise<void> {
  await db.updateTable('run_tasks').set({ lease_until: null }).where('id', '=', id).execute()
}

/**
 * Claims the agent's oldest open claim task that is not leased (or whose lease ran out): a new token hash
 * and a lease until `until`. Compare-and-set on the previous lease, so two claimers never get one task.
 */
export async function claimOldestTask(db: Kysely<Database>, agentId: string, workspaceId: string, at: string, until: string, tokenHash: string): Promise<TaskRow | undefined> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const candidate = await db
      .selectFrom('run_tasks')
      .selectAll()
      .where('agent_id', '=', agentId)
      .where('workspace_id', '=', workspaceId)
      // Written into the SQL: the open tasks' partial index (run_tasks_open) is chosen only for these very values.
      .where('state', '=', sql.lit('open'))
      .where('delivery', '=', sql.lit('claim'))
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', at)]))
      .orderBy('id')
      .limit(1)
      .executeTakeFirst()
    if (!candidate) return undefined
    const result = await db
      .updateTable('run_tasks')
      .set({ token_hash: tokenHash, lease_until: until, past_token_hashes: JSON.stringify(candidate.token_hash ? [...JSON.parse(candidate.past_token_hashes), candidate.token_hash] : JSON.parse(candidate.past_token_hashes)) })
      .where('id', '=', candidate.id)
      .where('state', '=', 'open')
      .where((eb) => (candidate.lease_until === null ? eb('lease_until', 'is', null) : eb('lease_until', '=', candidate.lease_until)))
      .executeTakeFirst()
    if (Number(result.numUpdatedRows) > 0) return { ...candidate, token_hash: tokenHash, lease_until: until }
  }
  return undefined
}

// Trigger names compare as JavaScript's toLowerCase() does (SQLite's own lower() folds ASCII only).
const sqliteWithLower = new WeakSet<object>()
function foldedTriggerName(db: Kysely<Database>) {
  const driver = sqliteDriverOf(db)
  if (driver && !sqliteWithLower.has(driver)) {
    driver.raw.function('tandem_lower', { deterministic: true }, (value: unknown) => (typeof value === 'string' ? value.toLowerCase() : value))
    sqliteWithLower.add(driver)
  }
  return driver ? sql<string>`tandem_lower(trigger_name)` : sql<string>`lower(trigger_name)`
}

/** The stream's saved cycles with this trigger name (case-insensitively), oldest first, at most `limit`: chosen in SQL. */
export async function findTriggeredCycles(db: Kysely<Database>, workspaceId: string, streamId: string, triggerName: string, limit: number): Promise<SavedCycle[]> {
  const rows = await db
    .selectFrom('cycles')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('stream_id', '=', streamId)
    .where(foldedTriggerName(db), '=', triggerName.toLowerCase())
    .orderBy('id')
    .limit(limit)
    .execute()
  return rows.map(toCycle)
}

/** Marks the run as one with step-0 tool calls (0070), locking its row till the caller's commit; a no-op once marked. */
export async function markRouteCalls(db: Kysely<Database>, runId: string): Promise<void> {
  await db.updateTable('runs').set({ route_calls: 1 }).where('id', '=', runId).where('route_calls', '=', 0).execute()
}
