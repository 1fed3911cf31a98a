// The inbox's data (docs/operators.md): what waits for me across streams, soonest deadline first, and its count in
// the header, kept live by GET /api/me/inbox/events (read with fetch, as the stream's events are: EventSource cannot
// send the key). A Tandem without an inbox (404, or 403 for an agent's key) shows no inbox at all rather than
// an empty one.
import { useEffect } from 'react'
import { useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query'
import { Link } from 'wouter'
import { ApiError, request } from './api/client'
import { followEventStream } from './events'

export interface InboxItem {
  kind: 'decision' | 'tool_approval' | 'question'
  runId: string; phaseRunId: string; callId: string | null; streamId: string; streamName: string
  triggerName: string; phaseName: string; summary: string; waitingSince: string
  remindAt: string | null; escalateAt: string | null; expireAt: string | null
  escalated: boolean; claimedBy: string | null; approvals: { have: number; need: number }
}

// Re-read while the live feed is down; a slow re-read while it is up only heals a missed change.
const INBOX_POLL_MS = 15000
const INBOX_LIVE_POLL_MS = 60000
let inboxLive = false

export const sameItem = (a: InboxItem, b: InboxItem) => a.kind === b.kind && a.phaseRunId === b.phaseRunId && a.callId === b.callId
export const nextDeadline = (item: InboxItem) => [item.remindAt, item.escalateAt, item.expireAt].filter((d): d is string => d !== null).sort()[0]

/** The API's order: soonest deadline first (items with one before items without), then the longest waiting. */
function inApiOrder(items: InboxItem[]): InboxItem[] {
  return [...items].sort((a, b) => {
    const [da, db] = [nextDeadline(a), nextDeadline(b)]
    if (da !== db) return da === undefined ? 1 : db === undefined ? -1 : da.localeCompare(db)
    return a.waitingSince.localeCompare(b.waitingSince)
  })
}

/** inbox.added replaces the item with the same kind, phaseRunId and callId (or adds it); inbox.removed drops it. */
function applyInboxEvent(queryClient: QueryClient, type: string, data: string) {
  let item: InboxItem
  try {
    item = JSON.parse(data) as InboxItem
  } catch {
    return
  }
  queryClient.setQueryData<InboxItem[] | null>(['inbox'], (items) => {
    if (!items) return items
    const others = items.filter((i) => !sameItem(i, item))
    return type === 'inbox.added' ? inApiOrder([...others, item]) : type === 'inbox.removed' ? others : items
  })
  // A read begun before this event (the first one, or the re-read on connecting) would land after it and take it
  // back: read again, from now.
  if (queryClient.isFetching({ queryKey: ['inbox'] }) > 0) void queryClient.invalidateQueries({ queryKey: ['inbox'] })
}

/** Follows GET /api/me/inbox/events while this Tandem has an inbox; on each (re)connection the list is read again. */
function useInboxEvents(enabled: boolean) {
  const queryClient = useQueryClient()
  useEffect(() => {
    if (!enabled) return
    const abort = new AbortController()
    void followEventStream('/api/me/inbox/events', abort.signal, {
      onOpen: () => {
        inboxLive = true
        void queryClient.invalidateQueries({ queryKey: ['inbox'] })
      },
      onEvent: (event) => applyInboxEvent(queryClient, event.event ?? '', event.data),
      onUnavailable: () => { inboxLive = false },
      onLost: () => { inboxLive = false },
    }, false)
    return () => {
      inboxLive = false
      abort.abort()
    }
  }, [enabled, queryClient])
}

/** The caller's inbox (first 100 items), or null where this Tandem has none (404). */
export function useInbox() {
  return useQuery({
    queryKey: ['inbox'],
    queryFn: async () => {
      try {
        return (await request<{ data: InboxItem[] }>('GET', '/api/me/inbox?limit=100')).data
      } catch (error) {
        if (error instanceof ApiError && (error.status === 404 || error.status === 403)) return null
        throw error
      }
    },
    retry: false,
    refetchInterval: (query) => (query.state.data === null ? false : inboxLive ? INBOX_LIVE_POLL_MS : INBOX_POLL_MS),
  })
}

/** The header's link, "Inbox (2)"; absent where this Tandem has no inbox. */
export function InboxLink({ current }: { current: boolean }) {
  const inbox = useInbox()
  useInboxEvents(Boolean(inbox.data))
  if (!inbox.data) return null
  const count = inbox.data.length
  return (
    <li>
      <Link href="/inbox" aria-current={current ? 'page' : undefined}>
        Inbox <span className={count > 0 ? 'badge plain tone-warning' : 'badge plain tone-neutral'}>({count})</span>
      </Link>
    </li>
  )
}
