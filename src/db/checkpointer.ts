// WAL checkpoints off the event loop. SQLite's own auto-checkpoint runs inside the COMMIT that fills the log
// past 1,000 pages: that commit copies the log into the database file and syncs it, about 10–40 ms during
// which the event loop (better-sqlite3 is synchronous) answers nobody — the p99 of every write. So the main
// connection runs with wal_autocheckpoint off, and a worker thread with a connection of its own checkpoints
// (PASSIVE) at most every CHECKPOINT_EVERY_MS while there are commits. The thread starts at the first commit
// that asks for it. Should the thread fail, the main connection goes back to SQLite's auto-checkpoint.
//
// The log restarts (its next frame written at its start again) only when a write begins after a checkpoint has
// copied all of it. Under sustained writes the thread never gets there: by the time it has copied the log, new
// commits have grown it, and the log grew for as long as the load lasted (118 MB after 2,000 runs), making every
// read slower (SQLite searches the log's index for each page it reads: reads took twice as long). So when the
// thread reports a log longer than RESTART_FRAMES of which it has copied all but MAX_TAIL_FRAMES, the main
// connection copies that tail itself right after its next COMMIT (finishIfDue, called by the driver with no
// transaction open): at most 500 pages and two syncs (the copy of a 1,000-page log took 10–40 ms above, so
// this holds the loop a few ms at most; measured under the runs bench: 1.7 % of the main thread's time), after
// which the next write restarts the log. A longer tail sends the thread back at once, to copy what came meanwhile.
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import type SqliteDatabase from 'better-sqlite3'

export const CHECKPOINT_EVERY_MS = 100
/** A log this long (SQLite's own auto-checkpoint threshold, 4 MiB of 4 KiB pages) is restarted once copied. */
export const RESTART_FRAMES = 1000
/** What the main connection copies at most to finish a checkpoint (more would hold the event loop too long). */
export const MAX_TAIL_FRAMES = 500
/** SQLite's default auto-checkpoint, restored if the thread fails. */
const AUTO_CHECKPOINT_PAGES = 1000

// The thread: its own connection to the file, on which it copies the log back into the database when asked.
// PASSIVE: it never waits for the writer, nor blocks it. Plain CommonJS source, so that it runs the same from
// dist/ and under tsx (a worker module in TypeScript would need tsx's loader in the thread).
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.betterSqlite3)
const db = new Database(workerData.path, { fileMustExist: true })
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close()
    parentPort.close()
    return
  }
  try {
    parentPort.postMessage({ done: db.pragma('wal_checkpoint(PASSIVE)')[0] })
  } catch (error) {
    parentPort.postMessage({ error: error.message })
  }
})
`
const BETTER_SQLITE3 = createRequire(import.meta.url).resolve('better-sqlite3')

export interface CheckpointStats {
  /** Checkpoints the thread has run. */
  checkpoints: number
  /** 'thread' while the thread checkpoints; 'inline' once it failed and SQLite's auto-checkpoint is back. */
  mode: 'thread' | 'inline'
  /** Checkpoints the main connection finished (finishIfDue), each letting the log restart. */
  finished: number
}

/** What `PRAGMA wal_checkpoint` answers: whether it was blocked, the log's frames, and how many are copied. */
interface CheckpointResult {
  busy: number
  log: number
  checkpointed: number
}

export class Checkpointer {
  private worker: Worker | null = null
  private running = false
  private dirty = false
  private lastAt = 0
  private timer: NodeJS.Timeout | undefined
  private closed = false
  readonly stats: CheckpointStats = { checkpoints: 0, mode: 'thread', finished: 0 }
  /** The thread has copied nearly all of a long log: the main connection copies the rest (finishIfDue). */
  private finishDue = false

  private readonly raw: SqliteDatabase.Database
  private readonly onFailure: (error: unknown) => void
  /** The thread's source (tests give one that fails). */
  private readonly threadSource

  constructor(
    raw: SqliteDatabase.Database,
    onFailure: (error: unknown) => void,
    threadSource = THREAD_SOURCE,
  ) {
    this.raw = raw
    this.onFailure = onFailure
    this.threadSource = threadSource
    raw.pragma('wal_autocheckpoint = 0')
  }

  /** After each COMMIT: the log has grown. */
  committed(): void {
    this.dirty = true
    if (this.running || this.timer || this.closed || this.stats.mode === 'inline') return
    const wait = this.lastAt + CHECKPOINT_EVERY_MS - Date.now()
    if (wait <= 0) this.request()
    else this.timer = setTimeout(() => this.request(), wait).unref()
  }

  private request(): void {
    this.timer = undefined
    if (this.closed || this.stats.mode === 'inline') return
    this.dirty = false
    this.running = true
    this.lastAt = Date.now()
    this.thread().postMessage('checkpoint')
  }

  private thread(): Worker {
    if (this.worker) return this.worker
    const worker = new Worker(this.threadSource, { eval: true, workerData: { path: this.raw.name, betterSqlite3: BETTER_SQLITE3 } })
    worker.unref()
    worker.on('message', (message: { done?: CheckpointResult; error?: string }) => {
      this.running = false
      if (message.error) return this.fail(new Error(`checkpoint failed: ${message.error}`))
      this.stats.checkpoints++
      const done = message.done
      this.finishDue = false
      if (done && done.log >= RESTART_FRAMES) {
        // A tail too long to copy on the event loop: the thread goes again at once, not CHECKPOINT_EVERY_MS
        // later, and copies only what came meanwhile, so the tail shrinks as long as it copies faster than
        // writes arrive.
        if (done.log - done.checkpointed <= MAX_TAIL_FRAMES) this.finishDue = true
        else this.lastAt = 0
      }
      if (this.dirty) this.committed()
    })
    worker.on('error', (error) => this.fail(error))
    worker.on('exit', (code) => {
      if (!this.closed) this.fail(new Error(`the checkpoint thread stopped (exit code ${code})`))
    })
    this.worker = worker
    return worker
  }

  /**
   * After a COMMIT, with no transaction open on the main connection: when the thread has copied all but the tail
   * of a long log, copies the tail (PASSIVE: it waits for nobody), so that the next write restarts the log.
   */
  finishIfDue(): void {
    if (!this.finishDue || this.running || this.closed || this.stats.mode === 'inline' || this.raw.inTransaction) return
    this.finishDue = false
    let result: CheckpointResult | undefined
    try {
      ;[result] = this.raw.pragma('wal_checkpoint(PASSIVE)') as CheckpointResult[]
    } catch (error) {
      // After a COMMIT whose transactions are told they committed: never thrown at them. SQLite's own
      // auto-checkpoint takes over, as when the thread fails.
      this.fail(error)
      return
    }
    if (result && result.busy === 0 && result.checkpointed === result.log) this.stats.finished++
  }

  private fail(error: unknown): void {
    if (this.stats.mode === 'inline' || this.closed) return
    this.stats.mode = 'inline'
    this.running = false
    this.worker?.terminate().catch(() => {})
    this.worker = null
    if (this.raw.open) this.raw.pragma(`wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`)
    this.onFailure(error)
  }

  /** Stops the thread (its connection closed first, so that the main connection's close checkpoints the rest). */
  async close(): Promise<void> {
    this.closed = true
    clearTimeout(this.timer)
    const worker = this.worker
    if (!worker) return
    this.worker = null
    const exited = new Promise((resolve) => worker.once('exit', resolve))
    worker.ref() // until it has exited: awaiting an unref'd thread would not keep the process alive
    worker.postMessage('close')
    await exited
  }
}
