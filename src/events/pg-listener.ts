// The instance's one LISTEN connection (PostgreSQL). It is a client of its own, outside the pool; when it
// drops it reconnects with back-off and says so, so that readers catch up from the table.
import type { FastifyBaseLogger } from 'fastify'
import pg from 'pg'
import { EVENTS_CHANNEL } from './wakeups.js'
import { DELTAS_CHANNEL, parseDelta, type LiveDelta } from './deltas.js'

export interface EventListener {
  close(): Promise<void>
  /** The backend process id of the current connection (tests terminate it to check reconnection). */
  readonly pid: number | undefined
}

const MAX_BACKOFF_MS = 5000

export async function listenForEvents(
  url: string,
  handlers: { wake(streamId: string): void; delta?(delta: LiveDelta): void; reconnected(): void; log: FastifyBaseLogger },
): Promise<EventListener> {
  let client: pg.Client | undefined
  let pid: number | undefined
  let closed = false
  let backoff = 100
  let retry: NodeJS.Timeout | undefined

  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: url, application_name: 'tandem-events' })
    next.on('notification', (message) => {
      const payload = message.payload ?? ''
      if (message.channel === DELTAS_CHANNEL) {
        const delta = parseDelta(payload)
        if (delta) handlers.delta?.(delta)
        return
      }
      const colon = payload.lastIndexOf(':')
      if (message.channel === EVENTS_CHANNEL && colon > 0) handlers.wake(payload.slice(0, colon))
    })
    next.on('error', (error) => {
      handlers.log.warn({ err: error }, 'the events listener lost its connection; reconnecting')
      dropped(next)
    })
    next.on('end', () => dropped(next))
    try {
      await next.connect()
      await next.query(`LISTEN ${EVENTS_CHANNEL}`)
      if (handlers.delta) await next.query(`LISTEN ${DELTAS_CHANNEL}`)
      const result = await next.query<{ pid: number }>('select pg_backend_pid() as pid')
      pid = result.rows[0]?.pid
    } catch (error) {
      await next.end().catch(() => undefined)
      throw error
    }
    client = next
    backoff = 100
  }

  const dropped = (which: pg.Client) => {
    if (closed || client !== which) return
    client = undefined
    pid = undefined
    which.end().catch(() => undefined)
    scheduleReconnect()
  }

  const scheduleReconnect = () => {
    if (closed || retry) return
    retry = setTimeout(() => {
      retry = undefined
      connect().then(
        () => {
          handlers.log.info('the events listener reconnected')
          handlers.reconnected()
        },
        (error: unknown) => {
          handlers.log.warn({ err: error }, 'the events listener could not reconnect; retrying')
          backoff = Math.min(backoff * 2, MAX_BACKOFF_MS)
          scheduleReconnect()
        },
      )
    }, backoff)
    retry.unref()
  }

  await connect()
  return {
    get pid() {
      return pid
    },
    async close() {
      closed = true
      if (retry) clearTimeout(retry)
      const current = client
      client = undefined
      await current?.end().catch(() => undefined)
    },
  }
}
