// `/inbox`: what waits for me as one line per item beside a details pane (over the list when narrow), triaged
// with the keyboard (j/k, a, d, c, x, Shift+A, Enter/o, Esc; listed under "?"), approved in bulk (one call per
// item, at most four at once, each under its own rules; questions skipped), filtered by kind, stream and "claimed
// by me" through the API, the filters kept in the URL.
import { useEffect, useId, useRef, useState, type MouseEvent } from 'react'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { Link, useLocation, useSearch } from 'wouter'
import { ApiError, request } from '../api/client'
import { sameItem, useInbox, type InboxItem } from '../inbox'
import { typing } from '../palette'
import { Badge, describeError, Empty, ErrorMessage, Loading, RelativeTime, useField } from '../ui'
import { useStreams } from './Streams'
import { AnswerForm, ToolDecisionForm } from './ToolCalls'

const KIND: Record<InboxItem['kind'], string> = { decision: 'Decision', tool_approval: 'Tool approval', question: 'Question' }
const BULK_CONCURRENCY = 4
const keyOf = (item: InboxItem) => `${item.kind}:${item.phaseRunId}:${item.callId ?? ''}`
const runLink = (item: InboxItem) => `/streams/${item.streamId}/runs/${item.runId}`

/** Approve one item under its own rules: a decision (with the note), or a tool call. */
function approve(item: InboxItem, note: string) {
  if (item.kind === 'tool_approval' && item.callId) return request('POST', `/api/runs/${item.runId}/tool-calls/${item.callId}/decision`, { decision: 'approve', ...(note ? { note } : {}) })
  return request('POST', `/api/runs/${item.runId}/phases/${item.phaseRunId}/decision`, { decision: 'approve', ...(note ? { note } : {}) })
}

function useFilters() {
  const search = new URLSearchParams(useSearch())
  const [location, navigate] = useLocation()
  const filters = { kind: search.get('kind') ?? '', stream: search.get('stream') ?? '', claimed: search.get('claimed') === 'me' }
  const set = (next: Partial<typeof filters>) => {
    const merged = { ...filters, ...next }
    const query = new URLSearchParams()
    if (merged.kind) query.set('kind', merged.kind)
    if (merged.stream) query.set('stream', merged.stream)
    if (merged.claimed) query.set('claimed', 'me')
    navigate(`${location}${query.size > 0 ? `?${query}` : ''}`, { replace: true })
  }
  return { filters, set }
}

export function InboxPage() {
  const queryClient = useQueryClient()
  const [, navigate] = useLocation()
  const base = useInbox()
  const { filters, set } = useFilters()
  const filtered = filters.kind !== '' || filters.stream !== '' || filters.claimed
  const query = new URLSearchParams({ limit: '100' })
  if (filters.kind) query.set('kind', filters.kind)
  if (filters.stream) query.set('streamId', filters.stream)
  if (filters.claimed) query.set('claimed', 'me')
  const narrowed = useQuery({
    queryKey: ['inbox', 'filtered', query.toString(), base.dataUpdatedAt],
    queryFn: async () => (await request<{ data: InboxItem[] }>('GET', `/api/me/inbox?${query}`)).data,
    enabled: filtered && Boolean(base.data),
    placeholderData: (previous) => previous,
  })
  const items = (filtered ? narrowed.data : base.data) ?? []
  const [currentKey, setCurrentKey] = useState<string | null>(null)
  const [lastIndex, setLastIndex] = useState(0)
  const [selected, setSelected] = useState<Set<string>>(new Set())
  const [anchor, setAnchor] = useState<number | null>(null)
  const [failures, setFailures] = useState<Map<string, string>>(new Map())
  const [bulkStatus, setBulkStatus] = useState('')
  const [note, setNote] = useState('')
  const [confirmReject, setConfirmReject] = useState(false)
  const noteRef = useRef<HTMLTextAreaElement>(null)
  // The current item: the one chosen; when it leaves the list (acted on), the one now at its place.
  let index = items.findIndex((item) => keyOf(item) === currentKey)
  if (index < 0) index = Math.min(lastIndex, items.length - 1)
  const current = index >= 0 ? items[index] : undefined
  useEffect(() => {
    if (current && keyOf(current) !== currentKey) setCurrentKey(keyOf(current))
    if (index >= 0 && index !== lastIndex) setLastIndex(index)
  })
  const moveTo = (i: number) => {
    const item = items[Math.max(0, Math.min(items.length - 1, i))]
    if (!item) return
    setCurrentKey(keyOf(item))
    setNote('')
    setConfirmReject(false)
    document.getElementById(`inbox-row-${keyOf(item)}`)?.scrollIntoView({ block: 'nearest' })
  }
  const refresh = (item?: InboxItem) => {
    void queryClient.invalidateQueries({ queryKey: ['inbox'] })
    if (item) void queryClient.invalidateQueries({ queryKey: ['runs', item.streamId] })
  }
  const decide = useMutation({
    mutationFn: ({ item, decision }: { item: InboxItem; decision: 'approve' | 'revise' | 'reject' | 'deny' }) =>
      item.kind === 'tool_approval' && item.callId
        ? request('POST', `/api/runs/${item.runId}/tool-calls/${item.callId}/decision`, { decision: decision === 'approve' ? 'approve' : 'deny', ...(note ? { note } : {}) })
        : request('POST', `/api/runs/${item.runId}/phases/${item.phaseRunId}/decision`, { decision: decision === 'deny' ? 'reject' : decision, ...(note ? { note } : {}) }),
    onSuccess: () => {
      setNote('')
      setConfirmReject(false)
    },
    onSettled: (_data, _error, { item }) => refresh(item),
  })
  const toggleSelect = (item: InboxItem) => {
    const next = new Set(selected)
    if (next.has(keyOf(item))) next.delete(keyOf(item))
    else next.add(keyOf(item))
    setSelected(next)
  }
  const bulk = useMutation({
    mutationFn: async () => {
      const chosen = items.filter((item) => selected.has(keyOf(item)))
      const queue = chosen.filter((item) => item.kind !== 'question')
      const outcome = { approved: [] as string[], failed: new Map<string, string>() }
      for (const item of chosen) if (item.kind === 'question') outcome.failed.set(keyOf(item), 'needs an answer')
      const worker = async () => {
        for (let item = queue.shift(); item; item = queue.shift()) {
          try {
            await approve(item, '')
            outcome.approved.push(keyOf(item))
          } catch (error) {
            outcome.failed.set(keyOf(item), error instanceof ApiError ? (error.problem.detail ?? describeError(error)) : describeError(error))
          }
        }
      }
      await Promise.all(Array.from({ length: BULK_CONCURRENCY }, worker))
      return outcome
    },
    onSuccess: ({ approved, failed }) => {
      setSelected(new Set(failed.keys()))
      setFailures(failed)
      setBulkStatus(`${approved.length} approved, ${failed.size} failed`)
    },
    onSettled: () => refresh(),
  })
  const pendingG = useRef(0)
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target) || document.querySelector('dialog[open]')) return
      if (event.key === 'g') {
        pendingG.current = Date.now()
        return
      }
      if (Date.now() - pendingG.current < 1500) return // "g a", "g c": the global navigation's
      const key = event.key
      if (key === 'j' || key === 'ArrowDown') moveTo(index + 1)
      else if (key === 'k' || key === 'ArrowUp') moveTo(index - 1)
      else if (key === 'A' && event.shiftKey) { if (selected.size > 0 && !bulk.isPending) bulk.mutate() }
      else if (key === 'a') { if (current && current.kind !== 'question') decide.mutate({ item: current, decision: 'approve' }) }
      else if (key === 'd') {
        if (current?.kind === 'tool_approval') decide.mutate({ item: current, decision: 'deny' })
        else if (current?.kind === 'decision') setConfirmReject(true)
      } else if (key === 'c') { if (current?.kind === 'decision') noteRef.current?.focus() }
      else if (key === 'x') { if (current) toggleSelect(current) }
      else if (key === 'Enter' || key === 'o') { if (current) navigate(runLink(current)) }
      else if (key === 'Escape') setSelected(new Set())
      else return
      event.preventDefault()
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  })
  const onRowClick = (event: MouseEvent, item: InboxItem, i: number) => {
    if ((event.target as HTMLElement).closest('input, a, button')) return
    moveTo(i)
  }
  const onCheck = (event: MouseEvent<HTMLInputElement>, item: InboxItem, i: number) => {
    if (event.shiftKey && anchor !== null) {
      const next = new Set(selected)
      for (let j = Math.min(anchor, i); j <= Math.max(anchor, i); j++) next.add(keyOf(items[j]!))
      setSelected(next)
    } else toggleSelect(item)
    setAnchor(i)
  }
  const allSelected = items.length > 0 && items.every((item) => selected.has(keyOf(item)))
  return (
    <>
      <h1>Inbox</h1>
      <Filters filters={filters} set={set} />
      {base.isPending ? <Loading what="your inbox" /> : <ErrorMessage error={base.error ?? narrowed.error} onRetry={() => void base.refetch()} />}
      {base.data === null ? <Empty title="This Tandem has no inbox yet.">Decisions wait in each stream's Runs tab.</Empty> : null}
      {base.data && items.length === 0 && !narrowed.isFetching ? (
        filtered ? <Empty title="Nothing matches these filters.">Clear a filter to see more.</Empty> : <Empty title="Nothing waits for you.">Decisions, tool approvals and questions for you appear here.</Empty>
      ) : null}
      {items.length > 0 ? (
        <div className="inbox-layout">
          <div className="inbox-list">
            <div className="row bulk-bar">
              <label className="small"><input type="checkbox" checked={allSelected} onChange={() => setSelected(allSelected ? new Set() : new Set(items.map(keyOf)))} />Select all</label>
              <button type="button" className="small" disabled={selected.size === 0 || bulk.isPending} onClick={() => bulk.mutate()} aria-keyshortcuts="Shift+A">
                Approve selected{selected.size > 0 ? ` (${selected.size})` : ''}
              </button>
              <span role="status" className="small">{bulk.isPending ? 'Approving…' : bulkStatus}</span>
              <span className="muted small">Press <kbd>?</kbd> for keys</span>
            </div>
            <ul aria-label="Waiting for me" className="inbox-rows">
              {items.map((item, i) => {
                const failure = failures.get(keyOf(item))
                const deadline = item.expireAt ?? item.escalateAt ?? item.remindAt
                return (
                  <li key={keyOf(item)} id={`inbox-row-${keyOf(item)}`} className={`inbox-row${i === index ? ' current' : ''}`} aria-current={i === index ? 'true' : undefined} onClick={(e) => onRowClick(e, item, i)}>
                    <input type="checkbox" aria-label={`Select ${KIND[item.kind].toLowerCase()} ${item.phaseName} in ${item.streamName}`} checked={selected.has(keyOf(item))} onClick={(e) => onCheck(e, item, i)} onChange={() => {}} />
                    <div className="inbox-row-text">
                      <div className="row">
                        <Badge tone={item.kind === 'decision' ? 'warning' : 'info'}>{KIND[item.kind]}</Badge>
                        <strong>{item.phaseName}</strong>
                        <span className="muted small">{item.streamName}</span>
                        {item.escalated ? <Badge tone="danger">escalated</Badge> : null}
                        {item.claimedBy ? <Badge tone="neutral">@{item.claimedBy}</Badge> : null}
                        <span className="muted small push"><RelativeTime iso={item.waitingSince} />{deadline ? <> · due <RelativeTime iso={deadline} /></> : null}</span>
                      </div>
                      <div className="summary-line small">{failure ? <span className="error-text">{failure}</span> : item.summary}</div>
                    </div>
                  </li>
                )
              })}
            </ul>
          </div>
          <section className="card inbox-details" aria-label="Details">
            {current ? (
              <Details
                key={keyOf(current)} item={current} note={note} setNote={setNote} noteRef={noteRef} decide={decide}
                confirmReject={confirmReject} setConfirmReject={setConfirmReject} onDone={() => refresh(current)}
              />
            ) : null}
          </section>
        </div>
      ) : null}
    </>
  )
}

function Filters({ filters, set }: ReturnType<typeof useFilters>) {
  const streams = useStreams()
  const id = useId()
  const streamName = streams.data?.find((s) => s.id === filters.stream)?.name ?? ''
  const [text, setText] = useState(streamName)
  useEffect(() => setText(streamName), [streamName])
  const pick = (value: string) => {
    setText(value)
    const match = streams.data?.find((s) => s.name === value)
    if (match) set({ stream: match.id })
    else if (value === '') set({ stream: '' })
  }
  return (
    <form className="row inbox-filters" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
      <label htmlFor={`${id}-kind`}>Kind</label>
      <select id={`${id}-kind`} value={filters.kind} onChange={(e) => set({ kind: e.target.value })}>
        <option value="">All kinds</option>
        <option value="decision">Decisions</option>
        <option value="tool_approval">Tool approvals</option>
        <option value="question">Questions</option>
      </select>
      <label htmlFor={`${id}-stream`}>Stream</label>
      <input id={`${id}-stream`} list={`${id}-streams`} value={text} onChange={(e) => pick(e.target.value)} aria-describedby={`${id}-stream-hint`} />
      <datalist id={`${id}-streams`}>{streams.data?.map((s) => <option key={s.id} value={s.name} />)}</datalist>
      <span id={`${id}-stream-hint`} className="muted small">{filters.stream ? '' : 'all streams'}</span>
      {filters.stream ? <button type="button" className="ghost small" onClick={() => pick('')}>Any stream</button> : null}
      <label className="small"><input type="checkbox" checked={filters.claimed} onChange={(e) => set({ claimed: e.target.checked })} />Claimed by me</label>
    </form>
  )
}

type Decide = ReturnType<typeof useMutation<unknown, Error, { item: InboxItem; decision: 'approve' | 'revise' | 'reject' | 'deny' }>>

function Details({ item, note, setNote, noteRef, decide, confirmReject, setConfirmReject, onDone }: {
  item: InboxItem; note: string; setNote: (note: string) => void; noteRef: React.RefObject<HTMLTextAreaElement | null>; decide: Decide
  confirmReject: boolean; setConfirmReject: (on: boolean) => void; onDone: () => void
}) {
  const claim = useMutation({
    mutationFn: (release: boolean) => request(release ? 'DELETE' : 'POST', `/api/runs/${item.runId}/phases/${item.phaseRunId}/claim`),
    onSettled: onDone,
  })
  const noteField = useField(decide.error, '/note')
  const deadline = item.expireAt ?? item.escalateAt ?? item.remindAt
  const mine = decide.variables && sameItem(decide.variables.item, item)
  return (
    <>
      <div className="spread">
        <h2>{item.phaseName}</h2>
        <Link href={runLink(item)}>Open run</Link>
      </div>
      <p className="muted small">
        {KIND[item.kind]} in <Link href={`/streams/${item.streamId}`}>{item.streamName}</Link> · {item.triggerName} · waiting since <RelativeTime iso={item.waitingSince} />
        {deadline ? <> · {item.expireAt ? 'expires' : item.escalateAt ? 'escalates' : 'reminder'} <RelativeTime iso={deadline} /></> : null}
        {item.approvals.need > 1 ? ` · ${item.approvals.have} of ${item.approvals.need} approvals` : ''}
      </p>
      <div className="output">{item.summary}</div>
      {item.kind === 'decision' ? (
        <div className="decide">
          <label htmlFor={noteField.input.id}>Note</label>
          <textarea {...noteField.input} ref={noteRef} rows={2} value={note} onChange={(e) => setNote(e.target.value)} aria-describedby={[noteField.describedBy, 'note-hint'].filter(Boolean).join(' ')} />
          <span id="note-hint" className="muted small">Optional, but needed to request changes.</span>
          {noteField.message}
          <div className="actions">
            <button type="button" onClick={() => decide.mutate({ item, decision: 'approve' })} disabled={decide.isPending} aria-keyshortcuts="a">Approve</button>
            <button type="button" className="secondary" onClick={() => (note.trim() ? decide.mutate({ item, decision: 'revise' }) : noteRef.current?.focus())} disabled={decide.isPending} aria-keyshortcuts="c">Request changes</button>
            <button type="button" className="danger" onClick={() => setConfirmReject(true)} disabled={decide.isPending} aria-keyshortcuts="d">Reject</button>
          </div>
          {confirmReject ? (
            <div role="alertdialog" aria-label="Reject this phase?" className="confirm">
              <p>Reject <strong>{item.phaseName}</strong>? The run ends.</p>
              <div className="actions">
                <button type="button" className="danger" onClick={() => decide.mutate({ item, decision: 'reject' })} autoFocus>Reject phase</button>
                <button type="button" className="secondary" onClick={() => setConfirmReject(false)}>Keep it</button>
              </div>
            </div>
          ) : null}
          {mine && decide.error && !noteField.message ? <ErrorMessage error={decide.error} /> : null}
        </div>
      ) : item.kind === 'tool_approval' && item.callId ? (
        <>
          <ToolDecisionForm runId={item.runId} streamId={item.streamId} callId={item.callId} name={item.phaseName} onDone={onDone} />
          {mine && decide.error ? <ErrorMessage error={decide.error} /> : null}
        </>
      ) : (
        <AnswerForm runId={item.runId} streamId={item.streamId} phaseRunId={item.phaseRunId} onDone={onDone} />
      )}
      <div className="actions">
        {item.claimedBy ? (
          <button type="button" className="ghost" onClick={() => claim.mutate(true)} disabled={claim.isPending}>Release</button>
        ) : (
          <button type="button" className="ghost" onClick={() => claim.mutate(false)} disabled={claim.isPending}>Claim</button>
        )}
        {item.claimedBy ? <span className="muted small">claimed by @{item.claimedBy}</span> : null}
      </div>
      <ErrorMessage error={claim.error} />
    </>
  )
}
