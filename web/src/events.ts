// Live updates as Server-Sent Events, read with fetch (so the API key goes in a header, which EventSource
// cannot send) and eventsource-parser; a lost connection resumes after the last event id, with back-off.
// A stream's events (GET /api/streams/{id}/events) refresh the queries they touch; where the service has no
// events endpoint (404), the stream's queries are polled instead. The inbox follows GET /api/me/inbox/events
// the same way (inbox.tsx).
import { useEffect, useState } from 'react'
import { useQueryClient, type QueryClient } from '@tanstack/react-query'
import { createParser, type EventSourceMessage } from 'eventsource-parser'
import { authorize } from './api/client'

export const POLL_INTERVAL_MS = 2000

export interface EventStreamHandlers {
  /** Connected (again): what was missed while away is for the caller to read. */
  onOpen?: () => void
  onEvent: (event: EventSourceMessage) => void
  /** The service has no such stream (404, 405): following stops. */
  onUnavailable?: () => void
  /** The connection failed or ended; it is tried again. */
  onLost?: () => void
}

/** Follows `path` until `signal` aborts. `resume` sends Last-Event-ID after a lost connection. */
export async function followEventStream(path: string, signal: AbortSignal, handlers: EventStreamHandlers, resume = true): Promise<void> {
  let lastId: string | undefined
  let delay = 1000
  while (!signal.aborted) {
    try {
      const headers = new Headers({ accept: 'text/event-stream' })
      if (lastId && resume) headers.set('last-event-id', lastId)
      authorize(headers)
      const response = await fetch(path, { headers, signal })
      if (response.status === 404 || response.status === 405) {
        handlers.onUnavailable?.()
        return
      }
      if (!response.ok || !response.body) throw new Error(`events: ${response.status}`)
      handlers.onOpen?.()
      delay = 1000
      const parser = createParser({
        onEvent: (event) => {
          if (event.id) lastId = event.id
          handlers.onEvent(event)
        },
      })
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        parser.feed(value)
      }
      handlers.onLost?.()
    } catch {
      if (signal.aborted) return
      handlers.onLost?.()
    }
    await new Promise((resolve) => setTimeout(resolve, delay))
    delay = Math.min(delay * 2, 30000)
  }
}

function refresh(queryClient: QueryClient, streamId: string, type: string) {
  if (type.startsWith('message.')) void queryClient.invalidateQueries({ queryKey: ['messages', streamId] })
  if (type.startsWith('cycle.')) void queryClient.invalidateQueries({ queryKey: ['cycles', streamId] })
  if (type.startsWith('run.')) void queryClient.invalidateQueries({ queryKey: ['runs', streamId] })
}

/** Follows the stream's events; returns the polling interval to use when there is no live connection. */
export function useStreamEvents(streamId: string): number | false {
  const queryClient = useQueryClient()
  const [polling, setPolling] = useState(false)
  useEffect(() => {
    const abort = new AbortController()
    void followEventStream(`/api/streams/${streamId}/events`, abort.signal, {
      onOpen: () => setPolling(false),
      onEvent: (event) => refresh(queryClient, streamId, event.event ?? ''),
      onUnavailable: () => setPolling(true),
      onLost: () => setPolling(true),
    })
    return () => abort.abort()
  }, [queryClient, streamId])
  return polling ? POLL_INTERVAL_MS : false
}
