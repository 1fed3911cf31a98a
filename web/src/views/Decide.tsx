// The decision on a phase awaiting one, used in the Runs tab and inline in the chat on the phase's output:
// a note, then Approve (primary), Request changes (secondary) and Reject (destructive).
import { useState } from 'react'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api, unwrap, type Me, type PhaseRun, type Run } from '../api/client'
import { ErrorMessage, useField } from '../ui'

export function inPool(phase: PhaseRun, me: Me | null): boolean {
  // Without /api/me (identity unknown) the buttons show and the server decides (403 for outsiders).
  if (!me) return true
  if (phase.operatorPool.length === 0) return me.role !== 'agent'
  return phase.operatorPool.some((entry) => entry.replace(/^@/, '').toLowerCase() === me.handle.toLowerCase())
}

export function DecisionForm({ run, phase }: { run: Run; phase: PhaseRun }) {
  const queryClient = useQueryClient()
  const [note, setNote] = useState('')
  const decide = useMutation({
    mutationFn: (decision: 'approve' | 'revise' | 'reject') =>
      unwrap(api.POST('/api/runs/{runId}/phases/{phaseRunId}/decision', { params: { path: { runId: run.id, phaseRunId: phase.id } }, body: { decision, ...(note ? { note } : {}) } })),
    onSuccess: () => setNote(''),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['runs', run.streamId] }),
  })
  const noteField = useField(decide.error, '/note')
  return (
    <div className="decide">
      <label htmlFor={noteField.input.id}>Note</label>
      <textarea {...noteField.input} rows={2} value={note} onChange={(e) => setNote(e.target.value)} placeholder="What should change? (sent with Request changes or Reject)" />
      {noteField.message}
      <div className="actions">
        <button type="button" onClick={() => decide.mutate('approve')} disabled={decide.isPending}>Approve</button>
        <button type="button" className="secondary" onClick={() => decide.mutate('revise')} disabled={decide.isPending}>Request changes</button>
        <button type="button" className="danger" onClick={() => decide.mutate('reject')} disabled={decide.isPending}>Reject</button>
      </div>
      {decide.error && !noteField.message ? <ErrorMessage error={decide.error} /> : null}
    </div>
  )
}
