// The inbox (OPERATORS.md): what waits for me across streams, soonest deadline first, and its count in the
// header. GET /api/me/inbox is newer than this console's typed client, so it is read untyped; a Tandem
// without it (404) shows no inbox at all rather than an empty one.
import { useState } from 'react'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { Link } from 'wouter'
import { api, ApiError, request, unwrap } from './api/client'
import { Badge, Empty, ErrorMessage, Loading, RelativeTime, useField } from './ui'

export interface InboxItem {
  kind: 'decision' | 'tool_approval' | 'question'
  runId: string; phaseRunId: string; callId: string | null; streamId: string; streamName: string
  triggerName: string; phaseName: string; summary: string; waitingSince: string
  remindAt: string | null; escalateAt: string | null; expireAt: string | null
  escalated: boolean; claimedBy: string | null; approvals: { have: number; need: number }
}

const INBOX_POLL_MS = 15000

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
    refetchInterval: (query) => (query.state.data === null ? false : INBOX_POLL_MS),
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
            {item.claimedBy ? (
              <button type="button" className="ghost" onClick={() => claim.mutate(true)} disabled={claim.isPending}>Release</button>
            ) : (
              <button type="button" className="ghost" onClick={() => claim.mutate(false)} disabled={claim.isPending}>Claim</button>
            )}
          </div>
          {decide.error && !noteField.message ? <ErrorMessage error={decide.error} /> : null}
        </div>
      ) : (
        <p className="muted small">Act on this in its stream: <Link href={`/streams/${item.streamId}`}>open {item.streamName}</Link>.</p>
      )}
      <ErrorMessage error={claim.error} />
    </li>
  )
}

/** The header's link, "Inbox (2)"; absent where this Tandem has no inbox. */
export function InboxLink({ current }: { current: boolean }) {
  const inbox = useInbox()
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
