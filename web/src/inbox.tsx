// The inbox (OPERATORS.md): what waits for me across streams, soonest deadline first, and its count in the
// header, kept live by GET /api/me/inbox/events (read with fetch, as the stream's events are: EventSource cannot
// send the key). A Tandem without an inbox (404, or 403 for an agent's key) shows no inbox at all rather than
// an empty one.
import { useEffect, useState } from 'react'
import { useMutation, useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query'
import { Link } from 'wouter'
import { api, ApiError, request, unwrap } from './api/client'
import { followEventStream } from './events'
import { Badge, Empty, ErrorMessage, Loading, RelativeTime, useField } from './ui'
import { AnswerForm, ToolDecisionForm } from './views/ToolCalls'

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

const sameItem = (a: InboxItem, b: InboxItem) => a.kind === b.kind && a.phaseRunId === b.phaseRunId && a.callId === b.callId
const nextDeadline = (item: InboxItem) => [item.remindAt, item.escalateAt, item.expireAt].filter((d): d is string => d !== null).sort()[0]

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

export function InboxPage() {
  const inbox = useInbox()
  return (
    <>
      <h1>Inbox</h1>
      {inbox.isPending ? <Loading what="your inbox" /> : <ErrorMessage error={inbox.error} onRetry={() => void inbox.refetch()} />}
      {inbox.data === null ? <Empty title="This Tandem has no inbox yet.">Decisions wait in each stream's Runs tab.</Empty> : null}
      {inbox.data?.length === 0 ? <Empty title="Nothing waits for you.">Decisions, tool approvals and questions for you appear here.</Empty> : null}
      <ul className="list" aria-label="Waiting for me">
        {inbox.data?.map((item) => <InboxEntry key={`${item.kind}-${item.phaseRunId}-${item.callId ?? ''}`} item={item} />)}
      </ul>
    </>
  )
}

const KIND: Record<InboxItem['kind'], string> = { decision: 'Decision', tool_approval: 'Tool approval', question: 'Question' }

function InboxEntry({ item }: { item: InboxItem }) {
  const queryClient = useQueryClient()
  const [note, setNote] = useState('')
  const refresh = () => {
    void queryClient.invalidateQueries({ queryKey: ['inbox'] })
    void queryClient.invalidateQueries({ queryKey: ['runs', item.streamId] })
  }
  const decide = useMutation({
    mutationFn: (decision: 'approve' | 'revise' | 'reject') =>
      unwrap(api.POST('/api/runs/{runId}/phases/{phaseRunId}/decision', { params: { path: { runId: item.runId, phaseRunId: item.phaseRunId } }, body: { decision, ...(note ? { note } : {}) } })),
    onSuccess: () => setNote(''),
    onSettled: refresh,
  })
  const claim = useMutation({
    mutationFn: (release: boolean) => request(release ? 'DELETE' : 'POST', `/api/runs/${item.runId}/phases/${item.phaseRunId}/claim`),
    onSettled: refresh,
  })
  const noteField = useField(decide.error, '/note')
  const deadline = item.expireAt ?? item.escalateAt ?? item.remindAt
  return (
    <li className="card" aria-label={`${KIND[item.kind]}: ${item.phaseName} in ${item.streamName}`}>
      <div className="spread">
        <span className="row">
          <Badge tone={item.kind === 'decision' ? 'warning' : 'info'}>{KIND[item.kind]}</Badge>
          <strong>{item.phaseName}</strong>
          <span className="muted">in <Link href={`/streams/${item.streamId}`}>{item.streamName}</Link> · {item.triggerName}</span>
          {item.escalated ? <Badge tone="danger">escalated</Badge> : null}
          {item.claimedBy ? <Badge tone="neutral">claimed by @{item.claimedBy}</Badge> : null}
        </span>
        <span className="muted small">
          waiting since <RelativeTime iso={item.waitingSince} />
          {deadline ? <> · {item.expireAt ? 'expires' : item.escalateAt ? 'escalates' : 'reminder'} <RelativeTime iso={deadline} /></> : null}
          {item.approvals.need > 1 ? ` · ${item.approvals.have} of ${item.approvals.need} approvals` : ''}
        </span>
      </div>
      <div className="output">{item.summary}</div>
      {item.kind === 'decision' ? (
        <div className="decide">
          <label htmlFor={noteField.input.id}>Note</label>
          <textarea {...noteField.input} rows={2} value={note} onChange={(e) => setNote(e.target.value)} />
          {noteField.message}
          <div className="actions">
            <button type="button" onClick={() => decide.mutate('approve')} disabled={decide.isPending}>Approve</button>
            <button type="button" className="secondary" onClick={() => decide.mutate('revise')} disabled={decide.isPending}>Request changes</button>
            <button type="button" className="danger" onClick={() => decide.mutate('reject')} disabled={decide.isPending}>Reject</button>
          </div>
          {decide.error && !noteField.message ? <ErrorMessage error={decide.error} /> : null}
        </div>
      ) : item.kind === 'tool_approval' && item.callId ? (
        <ToolDecisionForm runId={item.runId} streamId={item.streamId} callId={item.callId} name={item.phaseName} onDone={refresh} />
      ) : item.kind === 'question' ? (
        <AnswerForm runId={item.runId} streamId={item.streamId} phaseRunId={item.phaseRunId} onDone={refresh} />
      ) : (
        <p className="muted small">Act on this in its stream: <Link href={`/streams/${item.streamId}`}>open {item.streamName}</Link>.</p>
      )}
      <div className="actions">
        {item.claimedBy ? (
          <button type="button" className="ghost" onClick={() => claim.mutate(true)} disabled={claim.isPending}>Release</button>
        ) : (
          <button type="button" className="ghost" onClick={() => claim.mutate(false)} disabled={claim.isPending}>Claim</button>
        )}
      </div>
      <ErrorMessage error={claim.error} />
    </li>
  )
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
