// A stream's runs: each run's phases as a live timeline; operators in a waiting phase's pool approve,
// request changes (with a note) or reject; unfinished runs can be canceled.
import { useState } from 'react'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api, unwrap, type PhaseRun, type Run } from '../api/client'
import { useAuth } from '../auth'
import { allPages } from '../pages'
import { ErrorMessage, Loading, shortId, useField } from '../ui'
import { useAgentNames } from './Agents'

const FINISHED = ['succeeded', 'failed', 'rejected', 'canceled']
const STATUS_TEXT: Record<string, string> = { awaiting_decision: 'awaiting a decision' }

export function RunsPanel({ streamId, poll }: { streamId: string; poll: number | false }) {
  const runs = useQuery({
    queryKey: ['runs', streamId],
    queryFn: () => allPages((cursor) => unwrap(api.GET('/api/cycles/streams/{streamId}/runs', { params: { path: { streamId }, query: { limit: 100, ...(cursor ? { cursor } : {}) } } }))),
    // Run events refresh the list; while a run is unfinished it is also re-read every 2 s, in case an
    // instance does not emit run events.
    refetchInterval: (query) => (query.state.data?.some((run) => !FINISHED.includes(run.status)) ? 2000 : poll),
  })
  return (
    <>
      <h2 className="sr-only">Runs</h2>
      {runs.isPending ? <Loading /> : <ErrorMessage error={runs.error} />}
      {runs.data?.length === 0 ? <p>No runs yet: start one from a saved cycle.</p> : null}
      <ol className="list" aria-label="Runs">
        {runs.data?.map((run) => <RunItem key={run.id} run={run} />)}
      </ol>
    </>
  )
}

function RunItem({ run }: { run: Run }) {
  const queryClient = useQueryClient()
  const cancel = useMutation({
    mutationFn: () => unwrap(api.POST('/api/runs/{runId}/cancel', { params: { path: { runId: run.id } } })),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['runs', run.streamId] }),
  })
  return (
    <li className="card run">
      <h3>{run.triggerName} <span className={`status ${run.status}`}>{run.status}</span></h3>
      <p className="muted">Started {new Date(run.createdAt).toLocaleString()}{run.finishedAt ? `, finished ${new Date(run.finishedAt).toLocaleString()}` : ''}</p>
      {run.error ? <p className="error">{run.error.detail ?? run.error.type}</p> : null}
      <ol className="timeline" aria-label={`Phases of run ${run.triggerName}`}>
        {run.phases.map((phase) => <PhaseItem key={phase.id} run={run} phase={phase} />)}
      </ol>
      {!FINISHED.includes(run.status) ? <button type="button" onClick={() => cancel.mutate()} disabled={cancel.isPending}>Cancel run</button> : null}
      <ErrorMessage error={cancel.error} />
    </li>
  )
}

function inPool(phase: PhaseRun, handle: string | undefined, role: string | undefined) {
  if (phase.operatorPool.length === 0) return role !== 'agent'
  return handle !== undefined && phase.operatorPool.some((entry) => entry.replace(/^@/, '').toLowerCase() === handle.toLowerCase())
}

function PhaseItem({ run, phase }: { run: Run; phase: PhaseRun }) {
  const { me } = useAuth()
  const agentName = useAgentNames()
  const queryClient = useQueryClient()
  const [note, setNote] = useState('')
  const decide = useMutation({
    mutationFn: (decision: 'approve' | 'revise' | 'reject') =>
      unwrap(api.POST('/api/runs/{runId}/phases/{phaseRunId}/decision', { params: { path: { runId: run.id, phaseRunId: phase.id } }, body: { decision, ...(note ? { note } : {}) } })),
    onSuccess: () => setNote(''),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['runs', run.streamId] }),
  })
  const noteField = useField(decide.error, '/note')
  // Without /api/me (identity unknown) the buttons show and the server decides (403 for outsiders).
  const mayDecide = phase.status === 'awaiting_decision' && (!me || inPool(phase, me.handle, me.role))
  return (
    <li className={`phase ${phase.status}`}>
      <strong>{phase.index + 1}. {phase.phaseName}</strong> — <span className="status">{STATUS_TEXT[phase.status] ?? phase.status}</span>
      <span className="muted"> (agent: {agentName(phase.agentId)}{phase.attempts > 1 ? `, attempt ${phase.attempts}` : ''})</span>
      {phase.output ? <p className="output">{phase.output.text}</p> : null}
      {phase.error ? <p className="error">{phase.error.detail ?? phase.error.type}</p> : null}
      {phase.decisions.length > 0 ? (
        <ul className="decisions">
          {phase.decisions.map((d, i) => <li key={i}>{d.handle ? `@${d.handle}` : shortId(d.principalId)}: {d.decision}{d.note ? ` — “${d.note}”` : ''}</li>)}
        </ul>
      ) : null}
      {mayDecide ? (
        <div className="decide">
          <label htmlFor={noteField.input.id}>Note</label>
          <textarea {...noteField.input} rows={2} value={note} onChange={(e) => setNote(e.target.value)} />
          {noteField.message}
          <button type="button" onClick={() => decide.mutate('approve')} disabled={decide.isPending}>Approve</button>
          <button type="button" onClick={() => decide.mutate('revise')} disabled={decide.isPending}>Request changes</button>
          <button type="button" onClick={() => decide.mutate('reject')} disabled={decide.isPending}>Reject</button>
          {decide.error && !noteField.message ? <ErrorMessage error={decide.error} /> : null}
        </div>
      ) : null}
    </li>
  )
}
