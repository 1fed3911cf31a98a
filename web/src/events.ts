// Live updates as Server-Sent Events, read with fetch (so the API key goes in a header, which EventSource
// cannot send) and eventsource-parser; a lost connection resumes after the last event id, with back-off.
// A stream's events (GET /api/streams/{id}/events) refresh the queries they touch; where the service has no
// events endpoint (404), the stream's queries are polled instead. The inbox follows GET /api/me/inbox/events
// the same way (inbox.tsx).
import { useEffect, useState, useSyncExternalStore } from 'react'
import { useQueryClient, type QueryClient } from '@tanstack/react-query'
import { createParser, type EventSourceMessage } from 'eventsource-parser'
import { authorize, request } from './api/client'

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
  if (type.startsWith('tool_call.')) {
    void queryClient.invalidateQueries({ queryKey: ['tool-calls', streamId] })
    void queryClient.invalidateQueries({ queryKey: ['runs', streamId] })
  }
}

// Streaming answers (docs/agents-and-vendors.md): `message.delta` events (live only, no id) carry the text an agent writes; the
// text so far of each streaming message is kept here, outside the query cache, so that a re-read of the
// message list (its row is written at most every 250 ms) never takes the text back.
const liveText = new Map<string, string>()
const liveListeners = new Set<() => void>()
const announce = () => { for (const listener of liveListeners) listener() }
const subscribeLive = (listener: () => void) => {
  liveListeners.add(listener)
  return () => { liveListeners.delete(listener) }
}

/** A message is no longer streaming (its list entry says so): its live text is forgotten. */
export function forgetLiveText(messageId: string) {
  liveText.delete(messageId)
}

/** The text so far of a streaming message, as its deltas brought it (undefined before the first one). */
export function useLiveText(messageId: string): string | undefined {
  return useSyncExternalStore(subscribeLive, () => liveText.get(messageId))
}

interface Delta { streamId: string; messageId: string; offset: number; text: string; reset?: boolean }

function applyDelta(queryClient: QueryClient, streamId: string, data: string) {
  let delta: Delta
  try {
    delta = JSON.parse(data) as Delta
  } catch {
    return
  }
  const listed = queryClient.getQueryData<Array<{ id: string; text: string }>>(['messages', streamId])?.find((m) => m.id === delta.messageId)
  // Not listed yet: its message.created is on its way (or was missed); read the list again.
  if (!listed) void queryClient.invalidateQueries({ queryKey: ['messages', streamId] })
  const base = liveText.get(delta.messageId) ?? listed?.text ?? ''
  if (delta.reset) liveText.set(delta.messageId, delta.text)
  else if (delta.offset <= base.length) liveText.set(delta.messageId, base.slice(0, delta.offset) + delta.text)
  else {
    // A gap (deltas missed while away): the message row holds the text so far; the next deltas follow it.
    void request<{ text: string }>('GET', `/api/chat/messages/${delta.messageId}`).then((message) => {
      const now = liveText.get(delta.messageId) ?? ''
      if (message.text.length > now.length) liveText.set(delta.messageId, message.text)
      announce()
    }, () => {})
    return
  }
  announce()
}

/** Follows the stream's events; returns the polling interval to use when there is no live connection. */
export function useStreamEvents(streamId: string): number | false {
  const queryClient = useQueryClient()
  const [polling, setPolling] = useState(false)
  useEffect(() => {
    const abort = new AbortController()
    void followEventStream(`/api/streams/${streamId}/events`, abort.signal, {
      onOpen: () => setPolling(false),
      onEvent: (event) => {
        if (event.event === 'message.delta') applyDelta(queryClient, streamId, event.data)
        else refresh(queryClient, streamId, event.event ?? '')
      },
      onUnavailable: () => setPolling(true),
      onLost: () => setPolling(true),
    })
    return () => abort.abort()
  }, [queryClient, streamId])
  return polling ? POLL_INTERVAL_MS : false
}
