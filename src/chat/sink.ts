// Where one delivery's deltas go (docs/streaming-and-usage.md): the adapter calls `onDelta(text)` as the vendor
// writes; the first delta opens the task's message (created, or reset on a retried delivery), every delta goes
// live to the stream's SSE clients in order, and the row gets the text so far at most every 250 ms. `finish()`
// waits for all of it and writes the last text, before the engine settles the task.
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { publishDelta } from '../events/deltas.js'
import { openStreamingMessage, writeStreamingText } from './streaming.js'
import { MAX_TEXT_LENGTH } from './schemas.js'

/** The row of a streaming message is rewritten at most this often. */
export const ROW_WRITE_MS = 250

export interface SinkTarget {
  workspaceId: string
  streamId: string
  /** The agent whose message it is. */
  authorId: string
  taskId: string
  traceparent: string | null
}

export class StreamSink {
  private text = ''
  private messageId: string | null = null
  private opening: Promise<void> | null = null
  private closed = false
  private published = 0
  private reset = false
  private publishing: Promise<void> | null = null
  private written = ''
  private lastWrite = 0
  private writeTimer: NodeJS.Timeout | undefined
  private writing: Promise<void> = Promise.resolve()

  private readonly db: Kysely<Database>
  private readonly target: SinkTarget
  private readonly log: FastifyBaseLogger

  constructor(
    db: Kysely<Database>,
    target: SinkTarget,
    log: FastifyBaseLogger,
  ) {
    this.db = db
    this.target = target
    this.log = log
  }

  /** The AdapterContext's `onDelta`: never throws, never waits. */
  readonly onDelta = (delta: string): void => {
    if (this.closed || typeof delta !== 'string' || delta === '') return
    if (this.text.length + delta.length > MAX_TEXT_LENGTH) {
      // A message holds at most MAX_TEXT_LENGTH characters: the live text stops here; the answer, when it comes, is the message.
      this.closed = true
      this.log.warn({ taskId: this.target.taskId, length: this.text.length + delta.length }, `a streamed answer passed ${MAX_TEXT_LENGTH} characters; no more deltas go out`)
      return
    }
    this.text += delta
    if (!this.opening) {
      this.opening = this.open().catch((error: unknown) => {
        this.closed = true
        this.log.warn({ err: error, taskId: this.target.taskId }, 'opening a streaming message failed; the answer arrives whole')
      })
      return
    }
    if (this.messageId) {
      this.pump()
      this.scheduleWrite()
    }
  }

  /** The message the deltas went to (null: none arrived). */
  get message(): string | null {
    return this.messageId
  }

  private async open(): Promise<void> {
    const opened = await this.db.transaction().execute(async (trx) => {
      const task = await trx.selectFrom('run_tasks').select(['state']).where('id', '=', this.target.taskId).executeTakeFirst()
      if (task?.state !== 'open') return null
      return openStreamingMessage(trx, { ...this.target, text: this.text, streamKey: null })
    })
    if (!opened) {
      this.closed = true
      return
    }
    this.messageId = opened.message.id
    this.reset = opened.reset
    this.written = opened.message.text
    this.lastWrite = performance.now()
    this.pump()
    if (this.text !== this.written) this.scheduleWrite()
  }

  /** Publishes what has not gone out yet, one NOTIFY at a time (so deltas arrive in order). */
  private pump(): void {
    if (this.publishing || !this.messageId) return
    this.publishing = (async () => {
      while (this.published < this.text.length) {
        const offset = this.published
        const text = this.text.slice(offset)
        this.published = this.text.length
        const reset = this.reset && offset === 0
        try {
          await publishDelta(this.db, { streamId: this.target.streamId, messageId: this.messageId as string, offset, text, ...(reset ? { reset: true as const } : {}) })
        } catch (error) {
          this.log.warn({ err: error, taskId: this.target.taskId }, 'publishing a delta failed')
        }
      }
    })().finally(() => {
      this.publishing = null
      if (this.published < this.text.length) this.pump()
    })
  }

  private scheduleWrite(): void {
    if (this.writeTimer || !this.messageId) return
    const wait = Math.max(0, this.lastWrite + ROW_WRITE_MS - performance.now())
    this.writeTimer = setTimeout(() => {
      this.writeTimer = undefined
      this.writing = this.writing.then(() => this.write())
    }, wait)
    this.writeTimer.unref()
  }

  private async write(): Promise<void> {
    if (!this.messageId || this.text === this.written) return
    const text = this.text
    this.lastWrite = performance.now()
    try {
      await writeStreamingText(this.db, this.messageId, text)
      this.written = text
    } catch (error) {
      this.log.warn({ err: error, taskId: this.target.taskId }, 'writing a streaming message failed')
    }
  }

  /** The delivery is over: no more deltas; everything published and the row holding the last text. */
  async finish(): Promise<void> {
    this.closed = true
    if (this.writeTimer) clearTimeout(this.writeTimer)
    this.writeTimer = undefined
    await this.opening
    while (this.publishing) await this.publishing
    await this.writing
    await this.write()
  }
}
