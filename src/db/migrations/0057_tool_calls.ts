// Tool calls (AGENTS.md, "Tools"): one row per call an agent makes during a task, written in the run engine's
// transactions. `loop_state` holds the model loop's state (messages so far, usage, steps) on every call of a step,
// so a restart resumes the loop after an approval or an answer; `dispatched_at` marks a call handed to its tool,
// so no call is made twice. Frozen once landed.
import type { Kysely } from 'kysely'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('tool_calls')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id').onDelete('cascade'))
    .addColumn('phase_run_id', 'text', (c) => c.notNull())
    .addColumn('task_id', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('step', 'integer', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('model_call_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('input', 'text', (c) => c.notNull())
    .addColumn('output', 'text')
    .addColumn('error', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('approval', 'text')
    .addColumn('loop_state', 'text')
    .addColumn('dispatched_at', 'text')
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text')
    .execute()
  await db.schema.createIndex('tool_calls_run').on('tool_calls').columns(['run_id', 'id']).execute()
  await db.schema.createIndex('tool_calls_task').on('tool_calls').columns(['task_id', 'step', 'position']).execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('tool_calls').execute()
}
