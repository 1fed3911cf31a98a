// A stream's runs: each run's phases as a live stepper (status badges, the agent, durations, attempts, the
// output, the decision history); operators in a waiting phase's pool decide in place; unfinished runs can be
// canceled.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api, unwrap, type PhaseRun, type Run } from '../api/client'
import { useAuth } from '../auth'
import { AgentName, useAgentLabels } from '../agents'
import { allPages } from '../pages'
import { Badge, Empty, ErrorMessage, formatDuration, Loading, RelativeTime, shortId, StatusBadge, useNow } from '../ui'
import { DecisionForm, inPool } from './Decide'
import { PhaseToolCalls, useToolCalls, VIA, type ToolCall } from './ToolCalls'

export const FINISHED = ['succeeded', 'failed', 'rejected', 'canceled']

/** The stream's runs, oldest first; re-read every 2 s while one is unfinished, in case an instance emits no run events. */
export function useRuns(streamId: string, poll: number | false) {
  return useQuery({
    queryKey: ['runs', streamId],
    queryFn: () => allPages((cursor) => unwrap(api.GET('/api/cycles/streams/{streamId}/runs', { params: { path: { streamId }, query: { limit: 100, ...(cursor ? { cursor } : {}) } } }))),
    refetchInterval: (query) => (query.state.data?.some((run) => !FINISHED.includes(run.status)) ? 2000 : poll),
  })
}

export function RunsPanel({ streamId, poll }: { streamId: string; poll: number | false }) {
  const runs = useRuns(streamId, poll)
  return (
    <>
      <h2 className="sr-only">Runs</h2>
      {runs.isPending ? <Loading what="runs" /> : <ErrorMessage error={runs.error} onRetry={() => void runs.refetch()} />}
      {runs.data?.length === 0 ? <Empty title="No runs yet.">Start one from a saved cycle in the Cycles tab.</Empty> : null}
      <ol className="list" aria-label="Runs">
        {runs.data?.map((run) => <RunItem key={run.id} run={run} />)}
      </ol>
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

function RunItem({ run }: { run: Run }) {
  const queryClient = useQueryClient()
  const cancel = useMutation({
    mutationFn: () => unwrap(api.POST('/api/runs/{runId}/cancel', { params: { path: { runId: run.id } } })),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['runs', run.streamId] }),
  })
  const done = run.phases.filter((p) => p.status === 'succeeded').length
  const calls = useToolCalls(run)
  return (
    <li className="card run">
      <div className="run-head">
        <h3>{run.triggerName} <StatusBadge status={run.status} label={waitingFor(run)} /></h3>
        {!FINISHED.includes(run.status) ? <button type="button" className="secondary small" onClick={() => cancel.mutate()} disabled={cancel.isPending}>Cancel run</button> : null}
      </div>
      <div className="step-meta">
        <span>Started <RelativeTime iso={run.createdAt} /></span>
        <Elapsed from={run.startedAt ?? run.createdAt} to={run.finishedAt} label={run.finishedAt ? 'took' : 'running for'} />
        <span>{done} of {run.phases.length} phases done</span>
        <Usage of={run} />
      </div>
      {run.error && !run.phases.some((p) => p.error?.detail === run.error?.detail) ? <p className="error">{run.error.detail ?? run.error.type}</p> : null}
      <ErrorMessage error={cancel.error} />
      <ol className="stepper" aria-label={`Phases of run ${run.triggerName}`}>
        {run.phases.map((phase) => <PhaseStep key={phase.id} run={run} phase={phase} calls={calls.data} />)}
      </ol>
    </li>
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

/** Token usage and cost (AGENTS.md "Usage"), where the service reports them: on runs and phases. */
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

/** A quorum's progress (OPERATORS.md), shown when more than one approval is needed. */
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
