// Live updates of a stream: GET /api/streams/{id}/events as Server-Sent Events, read with fetch (so the API
// key goes in a header, which EventSource cannot send) and eventsource-parser. Each event refreshes the
// queries it touches; a lost connection resumes after the last event id. Where the service has no events
// endpoint (404), the stream's queries are polled instead.
import { useEffect, useState } from 'react'
import { useQueryClient, type QueryClient } from '@tanstack/react-query'
import { createParser } from 'eventsource-parser'
import { authorize } from './api/client'

export const POLL_INTERVAL_MS = 2000

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
    let lastId: string | undefined
    let delay = 1000
    const follow = async () => {
      while (!abort.signal.aborted) {
        try {
          const headers = new Headers({ accept: 'text/event-stream' })
          if (lastId) headers.set('last-event-id', lastId)
          authorize(headers)
          const response = await fetch(`/api/streams/${streamId}/events`, { headers, signal: abort.signal })
          if (response.status === 404 || response.status === 405) {
            setPolling(true)
            return
          }
          if (!response.ok || !response.body) throw new Error(`events: ${response.status}`)
          setPolling(false)
          delay = 1000
          const parser = createParser({
            onEvent: (event) => {
              if (event.id) lastId = event.id
              refresh(queryClient, streamId, event.event ?? '')
            },
          })
          const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
          for (;;) {
            const { done, value } = await reader.read()
            if (done) break
            parser.feed(value)
          }
        } catch {
          if (abort.signal.aborted) return
          setPolling(true)
        }
        await new Promise((resolve) => setTimeout(resolve, delay))
        delay = Math.min(delay * 2, 30000)
      }
    }
    void follow()
    return () => abort.abort()
  }, [queryClient, streamId])
  return polling ? POLL_INTERVAL_MS : false
}
