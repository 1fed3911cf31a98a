// The fold: moves the summed rollups (day-rollup.ts) by the changes the run engine noted (rollup.ts), in batches
// off the run's path. A note holds a phase run's keys, its figures as the summed rows count them (`old`) and the
// last of its wait rows they count (`old_wait_seq`); the fold adds the row as it is now minus `old`, appends the decision times of
// the wait rows after `old_wait_seq`, and removes the notes, in one transaction. Every instance folds every second,
// the notes of phases begun over 2 s ago (a phase answered soon after it began has one note for both changes).
//
// Why it is exact. A reader (figures.ts) reads the summed rows and, in the same statement, adds what each note in
// their periods changes (the row now minus `old`, the waits after `old_wait_seq`); so the summed rows plus the notes
// must account for every row at every moment. A change writes a phase run's row and its note in one transaction,
// the note read as the row was (or kept when one is there, still holding what the summed rows count); a fold adds
// a note's change and removes the note in one transaction. On PostgreSQL a fold takes its notes FOR UPDATE SKIP
// LOCKED, then reads their rows in a statement of its own, which sees every change committed before the locks were
// held: a change in flight holds its note's lock (the fold skips it), and a change that reaches a note the fold
// holds waits, then writes a new note whose `old` is the row as it was before it — the row the fold read. (Changes
// of one phase run are serialized by their run's lock, so each reads the row its predecessor committed.)
// Two folds never take the same note, and add to the summed rows in one order (RollupAdds.list), so they cannot
// deadlock each other; the adds are sums (`value = value + change`), so neither loses the other's.
import type { FastifyBaseLogger } from 'fastify'
import { PostgresAdapter, sql, type Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { applyAdd, FIGURE_COLUMNS, parseFigures, RollupAdds } from './day-rollup.js'
import type { InsightUnfoldedTable } from './insights.table.js'

/** How many notes one fold's transaction takes at most. */
export const FOLD_BATCH = 500
const EVERY_MS = 1000

/**
 * Folds up to `limit` notes into the summed rollups in one transaction; returns how many it took. Notes another
 * transaction holds (PostgreSQL) are left for the next fold, and so are those of phase runs that began after
 * `begunBefore` (an ISO time; the scheduler leaves the last two seconds' alone: a phase that began is often answered
 * within them, and its one note then holds both changes).
 */
export async function foldBatch(db: Kysely<Database>, limit = FOLD_BATCH, begunBefore?: string): Promise<number> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter
  const old = begunBefore === undefined ? sql`` : sql`where u.started_at < ${begunBefore}`
  return db.transaction().execute(async (trx) => {
    // The notes first, locked (PostgreSQL); their rows and waits after, in statements of their own. In the locking
    // statement a subquery would read as of that statement's start: a change that committed while it waited for a
    // note's lock would have its note (kept, re-read) taken with the row as it was before, and be lost.
    const { rows: notes } = await sql<InsightUnfoldedTable>`select * from insight_unfolded u ${old} order by u.phase_run_id limit ${limit}${postgres ? sql` for update skip locked` : sql``}`.execute(trx)
    if (notes.length === 0) return 0
    const ids = notes.map((note) => note.phase_run_id)
    const current = await trx.selectFrom('insight_phase_runs').select(ROW_COLUMNS).where('phase_run_id', 'in', ids).execute()
    const rows = new Map(current.map((row) => [row.phase_run_id, row]))
    const waits = new Map<string, Array<{ seq: number; ms: number }>>()
    for (const wait of await trx.selectFrom('insight_waits').select(['phase_run_id', 'seq', 'decision_ms']).where('phase_run_id', 'in', ids).where('decision_ms', 'is not', null).execute()) {
      const list = waits.get(wait.phase_run_id) ?? []
      list.push({ seq: Number(wait.seq), ms: Number(wait.decision_ms) })
      waits.set(wait.phase_run_id, list)
    }
    const adds = new RollupAdds()
    for (const note of notes) {
      // What the summed rows count of it is taken away (the note's keys, as a phase run's never change, and its
      // figures then), and its row now is added; a row that is gone (nothing removes one today) is only taken away.
      if (note.old !== null) adds.count(note, parseFigures(note.old), -1)
      const row = rows.get(note.phase_run_id)
      if (row === undefined) continue
      adds.count(row, row, 1)
      for (const wait of waits.get(note.phase_run_id) ?? []) if (wait.seq > Number(note.old_wait_seq)) adds.sample(row, wait.ms)
    }
    for (const add of adds.list()) await applyAdd(trx, add)
    await trx.deleteFrom('insight_unfolded').where('phase_run_id', 'in', ids).execute()
    return notes.length
  })
}

// What the fold reads of a per-phase-run row: what places it in the rollups, and its figures.
const ROW_COLUMNS = ['phase_run_id', 'workspace_id', 'agent_id', 'started_at', 'stream_id', 'cycle_id', ...FIGURE_COLUMNS] as const

/**
 * Folds every note there is (batch after batch), or with `youngMs` those of phases begun over that long ago;
 * returns how many. On PostgreSQL it skips the notes another fold (or a change) holds: when it returns, a fold
 * in flight elsewhere may still be adding some of them.
 */
export async function foldAll(db: Kysely<Database>, youngMs?: number): Promise<number> {
  let total = 0
  for (;;) {
    const folded = await foldBatch(db, FOLD_BATCH, youngMs === undefined ? undefined : new Date(Date.now() - youngMs).toISOString())
    total += folded
    if (folded < FOLD_BATCH) return total
  }
}

/**
 * Folds every `everyMs` (unref'd) until stopped, leaving the notes of phases begun in the last two intervals (at
 * most 2 s) for later; a failed fold is logged and tried again at the next tick.
 */
export function startFold(db: Kysely<Database>, log: FastifyBaseLogger, everyMs = EVERY_MS): { stop(): Promise<void> } {
  const youngMs = Math.min(2000, 2 * everyMs)
  let running: Promise<unknown> | null = null
  let stopped = false
  const timer = setInterval(() => {
    // A tick while a fold still runs is skipped: the fold takes every note there is.
    if (stopped || running) return
    running = foldAll(db, youngMs)
      .catch((error: unknown) => log.warn({ err: error }, 'folding the scorecard rollups failed; tried again in a second'))
      .finally(() => (running = null))
  }, everyMs)
  timer.unref()
  return {
    async stop() {
      stopped = true
      clearInterval(timer)
      await running
    },
  }
}
