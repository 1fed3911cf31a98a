// A stream's runs, one line each (title, what started it, status, start time linking to the run's permalink,
// who it waits on, phases done, warnings); expanded, the phases as a live stepper (status badges, the agent,
// durations, attempts, the output, warnings, the decision history) where operators in a waiting phase's pool
// decide in place. Unfinished runs can be canceled, failed and canceled ones retried.
import { useEffect, useId, useRef, useState } from 'react'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { Link } from 'wouter'
import { api, unwrap, type PhaseRun, type Run } from '../api/client'
import { useAuth } from '../auth'
import { AgentName, useAgentLabels } from '../agents'
import { allPages } from '../pages'
import { Badge, Empty, ErrorMessage, formatDuration, Loading, RelativeTime, shortId, StatusBadge, useNow } from '../ui'
import { DecisionForm, inPool } from './Decide'
import { PhaseToolCalls, useToolCalls, VIA, type ToolCall } from './ToolCalls'
import { useInbox } from '../inbox'
import { RetryRunButton } from './RetryRun'

export const FINISHED = ['succeeded', 'failed', 'rejected', 'canceled']

/** The stream's runs, oldest first; re-read every 2 s while one is unfinished, in case an instance emits no run events. */
export function useRuns(streamId: string, poll: number | false) {
  return useQuery({
    queryKey: ['runs', streamId],
    queryFn: () => allPages((cursor) => unwrap(api.GET('/api/cycles/streams/{streamId}/runs', { params: { path: { streamId }, query: { limit: 100, ...(cursor ? { cursor } : {}) } } }))),
    refetchInterval: (query) => (query.state.data?.some((run) => !FINISHED.includes(run.status)) ? 2000 : poll),
  })
}

const PAGE = 25
const STATUS_FILTERS: Array<[string, string]> = [
  ['all', 'All'], ['mine', 'Waiting for me'], ['queued', 'Queued'], ['running', 'Running'], ['waiting', 'Waiting'],
  ['succeeded', 'Succeeded'], ['failed', 'Failed'], ['rejected', 'Rejected'], ['canceled', 'Canceled'],
]
const STARTED_BY: Record<string, string> = { manual: 'by hand', schedule: 'by a schedule', message: 'by a message', hook: 'by a hook' }

/**
 * The stream's runs newest first, those waiting for me (the inbox's rule) before the rest, one line each;
 * 25 at a time. Expanded on arrival: the permalink's run (only it, brought into view), else a run just started
 * or retried here, else the top run when it waits for me.
 */
export function RunsPanel({ streamId, poll, permalink, justStarted, onStarted }: { streamId: string; poll: number | false; permalink?: string; justStarted?: string; onStarted?: (runId: string) => void }) {
  const runs = useRuns(streamId, poll)
  const inbox = useInbox()
  const cycles = useQuery({
    queryKey: ['cycles', streamId],
    queryFn: () => allPages((cursor) => unwrap(api.GET('/api/cycles/streams/{streamId}/cycles', { params: { path: { streamId }, query: { limit: 100, ...(cursor ? { cursor } : {}) } } }))),
  })
  const [filter, setFilter] = useState('all')
  const [shown, setShown] = useState(PAGE)
  const [open, setOpen] = useState<Set<string> | null>(null)
  const mine = new Set((inbox.data ?? []).map((item) => item.runId))
  const titles = new Map((cycles.data ?? []).map((c) => [c.id, c.description.trim() || c.triggerName]))
  const ordered = [...(runs.data ?? [])].sort((a, b) => Number(mine.has(b.id)) - Number(mine.has(a.id)) || b.id.localeCompare(a.id))
  const filtered = ordered.filter((run) => filter === 'all' || (filter === 'mine' ? mine.has(run.id) : run.status === filter))
  // A permalink reaches its run even past the first page.
  const linkedAt = permalink ? filtered.findIndex((run) => run.id === permalink) : -1
  const visible = filtered.slice(0, Math.max(shown, linkedAt + 1))
  const first = ordered[0]
  const arrival = permalink ?? justStarted ?? (first && mine.has(first.id) ? first.id : undefined)
  const expanded = open ?? new Set(arrival ? [arrival] : [])
  const toggle = (id: string) => {
    const next = new Set(expanded)
    if (next.has(id)) next.delete(id)
    else next.add(id)
    setOpen(next)
  }
  const statusId = useId()
  return (
    <>
      <h2 className="sr-only">Runs</h2>
      <div className="row runs-toolbar">
        <label htmlFor={statusId}>Status</label>
        <select id={statusId} value={filter} onChange={(e) => { setFilter(e.target.value); setShown(PAGE) }}>
          {STATUS_FILTERS.map(([value, label]) => <option key={value} value={value}>{label}</option>)}
        </select>
        <span className="muted small">{filtered.length} run{filtered.length === 1 ? '' : 's'}</span>
      </div>
      {runs.isPending ? <Loading what="runs" /> : <ErrorMessage error={runs.error} onRetry={() => void runs.refetch()} />}
      {runs.data?.length === 0 ? <Empty title="No runs yet.">Start one from a saved cycle in the Cycles tab.</Empty> : null}
      {runs.data && runs.data.length > 0 && filtered.length === 0 ? <Empty title="No run matches this status.">Choose All to see every run.</Empty> : null}
      <ol className="list run-rows" aria-label="Runs">
        {visible.map((run) => (
          <RunItem
            key={run.id} run={run} title={titles.get(run.cycleId) ?? run.triggerName} waitsForMe={mine.has(run.id)}
            expanded={expanded.has(run.id)} onToggle={() => toggle(run.id)} linked={run.id === permalink}
            onRetried={(id) => { setOpen(new Set([id])); onStarted?.(id) }}
          />
        ))}
      </ol>
      {filtered.length > visible.length ? <button type="button" className="secondary" onClick={() => setShown(visible.length + PAGE)}>Load more runs</button> : null}
    </>
  )
}

/** How long something took, or has taken so far. */
function Elapsed({ from, to, label }: { from: string | null; to: string | null; label: string }) {
  const now = useNow()
  if (!from) return null
  const ms = (to ? new Date(to).getTime() : Math.max(now, Date.now())) - new Date(from).getTime()
  return <span>{label} {formatDuration(ms)}{to ? '' : ' so far'}</span>
}

/** Who a waiting run waits on: "you", else the pool's handles ("@maria"), else "anyone". */
function waitingOn(run: Run, waitsForMe: boolean): string | null {
  if (run.status !== 'waiting') return null
  if (waitsForMe) return 'you'
  const phase = run.phases.find((p) => p.status.startsWith('awaiting_'))
  if (!phase) return null
  return phase.operatorPool.length > 0 ? phase.operatorPool.map((h) => `@${h.replace(/^@/, '')}`).join(', ') : 'anyone'
}

function RunItem({ run, title, waitsForMe, expanded, onToggle, linked, onRetried }: { run: Run; title: string; waitsForMe: boolean; expanded: boolean; onToggle: () => void; linked: boolean; onRetried: (id: string) => void }) {
  const queryClient = useQueryClient()
  const ref = useRef<HTMLLIElement>(null)
  useEffect(() => {
    if (linked) ref.current?.scrollIntoView({ block: 'start' })
  }, [linked])
  const cancel = useMutation({
    mutationFn: () => unwrap(api.POST('/api/runs/{runId}/cancel', { params: { path: { runId: run.id } } })),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['runs', run.streamId] }),
  })
  const done = run.phases.filter((p) => p.status === 'succeeded').length
  const warnings = run.phases.reduce((n, p) => n + ((p as { warnings?: string[] }).warnings?.length ?? 0), 0)
  const on = waitingOn(run, waitsForMe)
  const panelId = `run-${run.id}`
  return (
    <li ref={ref} className={`card run${expanded ? ' open' : ''}`} aria-current={linked ? 'true' : undefined}>
      <div className="run-line">
        <button type="button" className="disclosure" aria-expanded={expanded} aria-controls={panelId} onClick={onToggle}>
          <span aria-hidden="true" className="chevron">{expanded ? '▾' : '▸'}</span>{title}
        </button>
        <span className="muted small">{run.retryOf ? 'retry' : STARTED_BY[run.trigger.kind] ?? run.trigger.kind}</span>
        <StatusBadge status={run.status} label={waitingFor(run)} />
        <Link href={`/streams/${run.streamId}/runs/${run.id}`} className="small"><RelativeTime iso={run.createdAt} /></Link>
        {on ? <span className="small">waiting on <strong>{on}</strong></span> : null}
        <span className="muted small">{done}/{run.phases.length} phases</span>
        {warnings > 0 ? <Badge tone="warning">{warnings} warning{warnings === 1 ? '' : 's'}</Badge> : null}
        <span className="run-actions">
          {!FINISHED.includes(run.status) ? <button type="button" className="secondary small" onClick={() => cancel.mutate()} disabled={cancel.isPending}>Cancel run</button> : null}
          <RetryRunButton run={run} onRetried={onRetried} />
        </span>
      </div>
      <ErrorMessage error={cancel.error} />
      {expanded ? <RunDetails run={run} id={panelId} /> : null}
    </li>
  )
}

function RunDetails({ run, id }: { run: Run; id: string }) {
  const calls = useToolCalls(run)
  return (
    <div id={id} className="run-details">
      <div className="step-meta">
        <span>Started <RelativeTime iso={run.createdAt} /></span>
        <Elapsed from={run.startedAt ?? run.createdAt} to={run.finishedAt} label={run.finishedAt ? 'took' : 'running for'} />
        <Usage of={run} />
        {run.retryOf ? <span>retries run {shortId(run.retryOf)}</span> : null}
        {run.retriedBy ? <span>retried by run {shortId(run.retriedBy)}</span> : null}
      </div>
      {run.error && !run.phases.some((p) => p.error?.detail === run.error?.detail) ? <p className="error">{run.error.detail ?? run.error.type}</p> : null}
      <ol className="stepper" aria-label={`Phases of run ${run.triggerName}`}>
        {run.phases.map((phase) => <PhaseStep key={phase.id} run={run} phase={phase} calls={calls.data} />)}
      </ol>
    </div>
  )
}

const DECIDED: Record<string, string> = { approve: 'approved', revise: 'asked for changes', reject: 'rejected' }

export function DecisionHistory({ phase }: { phase: PhaseRun }) {
  if (phase.decisions.length === 0) return null
  return (
    <ul className="decisions" aria-label={`Decisions on ${phase.phaseName}`}>
      {phase.decisions.map((d, i) => (
        <li key={i}>
          <StatusBadge status={d.decision} />
          <span><strong>{d.handle ? `@${d.handle}` : shortId(d.principalId)}</strong> {DECIDED[d.decision]}{d.note ? `: “${d.note}”` : ''}{d.via ? <span className="muted"> · via {VIA[d.via]}</span> : null}</span>
          <span className="muted"><RelativeTime iso={d.at} /></span>
        </li>
      ))}
    </ul>
  )
}

function PhaseStep({ run, phase, calls }: { run: Run; phase: PhaseRun; calls: ToolCall[] | null | undefined }) {
  const { me } = useAuth()
  const agent = useAgentLabels()(phase.agentId)
  const marker = phase.status === 'succeeded' ? '✓' : phase.status === 'failed' ? '✕' : String(phase.index + 1)
  return (
    <li className={`phase ${phase.status}`}>
      <span className="step-marker" aria-hidden="true">{marker}</span>
      <div className="step-body">
        <div className="step-title">
          <h4><span className="sr-only">Phase {phase.index + 1}: </span>{phase.phaseName}</h4>
          <StatusBadge status={phase.status} />
        </div>
        <div className="step-meta">
          <AgentName label={agent} />
          {phase.attempts > 1 ? <span>attempt {phase.attempts}</span> : null}
          <Elapsed from={phase.startedAt} to={phase.finishedAt} label={phase.finishedAt ? 'took' : 'for'} />
          <Usage of={phase} />
          <Approvals phase={phase} />
          <Deadlines phase={phase} />
          <span>{phase.autoAdvance ? 'advances on its own' : `gate: ${phase.operatorPool.length > 0 ? phase.operatorPool.map((h) => `@${h.replace(/^@/, '')}`).join(', ') : 'any operator'}`}</span>
        </div>
        {phase.output ? <div className="output">{phase.output.text}</div> : null}
        {phase.error ? <p className="error">{phase.error.detail ?? phase.error.type}</p> : null}
        {(phase as { warnings?: string[] }).warnings?.length ? (
          <ul className="phase-warnings" aria-label={`Warnings of ${phase.phaseName}`}>
            {(phase as { warnings?: string[] }).warnings!.map((w, i) => <li key={i}>{w}</li>)}
          </ul>
        ) : null}
        <PhaseToolCalls run={run} phase={phase} calls={calls} />
        <DecisionHistory phase={phase} />
        {phase.status === 'awaiting_decision' && inPool(phase, me) ? <DecisionForm run={run} phase={phase} /> : null}
      </div>
    </li>
  )
}

/** What a waiting run waits for, most pressing first: a tool call to approve, a question to answer, a decision. */
export function waitingFor(run: { status: string; phases: Array<{ status: string }> }): string | undefined {
  if (run.status !== 'waiting') return undefined
  const statuses = new Set(run.phases.map((p) => p.status))
  if (statuses.has('awaiting_tool_approval')) return 'Waiting for a tool approval'
  if (statuses.has('awaiting_input')) return 'Waiting for an answer'
  if (statuses.has('awaiting_decision')) return 'Waiting for a decision'
  return undefined
}

/** Token usage and cost (docs/agents-and-vendors.md "Usage"), where the service reports them: on runs and phases. */
interface Metered { usage?: { inputTokens: number; outputTokens: number } | null; costUsd?: number | null }
const tokens = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 })
const dollars = new Intl.NumberFormat(undefined, { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 4 })

export function Usage({ of }: { of: object }) {
  const { usage, costUsd } = of as Metered
  if (!usage && (costUsd === undefined || costUsd === null)) return null
  const title = usage ? `${usage.inputTokens.toLocaleString()} input tokens, ${usage.outputTokens.toLocaleString()} output tokens` : undefined
  return (
    <span className="usage" title={title}>
      {usage ? <>{tokens.format(usage.inputTokens)} in · {tokens.format(usage.outputTokens)} out tokens</> : null}
      {costUsd !== undefined && costUsd !== null ? <>{usage ? ' · ' : ''}{dollars.format(costUsd)}</> : null}
    </span>
  )
}

/** A quorum's progress (docs/operators.md), shown when more than one approval is needed. */
function Approvals({ phase }: { phase: PhaseRun }) {
  const approvals = (phase as { approvals?: { have: number; need: number } | null }).approvals
  if (!approvals || approvals.need <= 1) return null
  return <span>{approvals.have} of {approvals.need} approvals</span>
}

/** While a phase waits: its policy's timers counted down (remind, escalate, expire), and escalation. */
function Deadlines({ phase }: { phase: PhaseRun }) {
  const p = phase as { deadlines?: { remindAt: string | null; escalateAt: string | null; expireAt?: string | null } | null; escalated?: boolean }
  const d = p.deadlines
  const due = d ? ([['reminder', d.remindAt], ['escalates', d.escalateAt], ['expires', d.expireAt ?? null]] as const).filter(([, at]) => at !== null) : []
  if (due.length === 0 && !p.escalated) return null
  return (
    <span className="deadlines">
      {p.escalated ? <Badge tone="danger">escalated</Badge> : null}
      {due.map(([what, at]) => <span key={what}> {what} <RelativeTime iso={at!} /></span>)}
    </span>
  )
}
