// A stream's cycles: write a prompt, draft, read the phases, refine with another prompt, save; the saved
// cycles, each with "Start run".
import { useState, type FormEvent } from 'react'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api, unwrap, type CycleDefinition, type DraftResult } from '../api/client'
import { allPages } from '../pages'
import { ErrorMessage, Field, Loading, useField } from '../ui'
import { useAgentNames } from './Agents'

type Draft = DraftResult
type Phase = CycleDefinition['phasesTemplate'][number]

function draftCycle(streamId: string, mode: 'generate' | 'refine', prompt: string, current?: CycleDefinition): Promise<Draft> {
  return unwrap(api.POST('/api/cycles/streams/{streamId}/cycles/draft', { params: { path: { streamId } }, body: { mode, prompt, ...(current ? { current } : {}) } }))
}

export function PhaseList({ phases, children }: { phases: Phase[]; children?: (phase: Phase, index: number) => React.ReactNode }) {
  const agentName = useAgentNames()
  return (
    <ol className="phases">
      {phases.map((phase, index) => (
        <li key={phase.id}>
          <strong>{phase.phaseName}</strong> — agent: {agentName(phase.agentId)}; operators:{' '}
          {phase.operatorPool.length > 0 ? phase.operatorPool.join(', ') : 'anyone'}; gate: {phase.autoAdvance ? 'advances on its own' : 'waits for a decision'}
          <div className="muted">{phase.goal}</div>
          {children?.(phase, index)}
        </li>
      ))}
    </ol>
  )
}

export function CyclesPanel({ streamId, onRunStarted }: { streamId: string; onRunStarted: () => void }) {
  const queryClient = useQueryClient()
  const [prompt, setPrompt] = useState('')
  const [draft, setDraft] = useState<Draft | null>(null)
  const drafting = useMutation({
    mutationFn: (mode: 'generate' | 'refine') => draftCycle(streamId, mode, prompt, mode === 'refine' ? draft?.draft : undefined),
    onSuccess: (result) => setDraft(result),
  })
  const save = useMutation({
    mutationFn: (definition: CycleDefinition) => unwrap(api.POST('/api/cycles/streams/{streamId}/cycles', { params: { path: { streamId } }, body: definition })),
    onSuccess: () => {
      setDraft(null)
      setPrompt('')
      void queryClient.invalidateQueries({ queryKey: ['cycles', streamId] })
    },
  })
  const promptField = useField(drafting.error, '/prompt')
  const submit = (event: FormEvent) => {
    event.preventDefault()
    drafting.mutate(draft ? 'refine' : 'generate')
  }
  return (
    <>
      <h2 className="sr-only">Cycles</h2>
      <form className="card" onSubmit={submit}>
        <Field label="Prompt" field={promptField}>
          <textarea {...promptField.input} rows={4} value={prompt} onChange={(e) => setPrompt(e.target.value)} maxLength={100000} />
        </Field>
        <button type="button" onClick={() => drafting.mutate('generate')} disabled={drafting.isPending}>Draft</button>
        <button type="button" onClick={() => drafting.mutate('refine')} disabled={!draft || drafting.isPending}>Refine</button>
        <button type="button" onClick={() => draft && save.mutate(draft.draft)} disabled={!draft || save.isPending}>Save cycle</button>
        {drafting.isPending ? <p aria-live="polite">Drafting…</p> : null}
        {drafting.error && !promptField.message ? <ErrorMessage error={drafting.error} /> : null}
        <ErrorMessage error={save.error} />
      </form>
      {draft ? (
        <section className="card" aria-label="Draft">
          <h3>Draft: {draft.draft.triggerName}</h3>
          <p>{draft.draft.description}</p>
          <PhaseList phases={draft.draft.phasesTemplate} />
          {draft.changes.length > 0 ? (
            <><h4>Changes</h4><ul>{draft.changes.map((c, i) => <li key={i}>{c.op}: {c.detail}</li>)}</ul></>
          ) : null}
          {draft.warnings.length > 0 ? (
            <><h4>Warnings</h4><ul>{draft.warnings.map((w, i) => <li key={i}>{w.detail}</li>)}</ul></>
          ) : null}
        </section>
      ) : null}
      <SavedCycles streamId={streamId} onRunStarted={onRunStarted} />
    </>
  )
}

function SavedCycles({ streamId, onRunStarted }: { streamId: string; onRunStarted: () => void }) {
  const queryClient = useQueryClient()
  const cycles = useQuery({
    queryKey: ['cycles', streamId],
    queryFn: () => allPages((cursor) => unwrap(api.GET('/api/cycles/streams/{streamId}/cycles', { params: { path: { streamId }, query: { limit: 100, ...(cursor ? { cursor } : {}) } } }))),
  })
  const start = useMutation({
    mutationFn: (cycleId: string) => unwrap(api.POST('/api/cycles/streams/{streamId}/cycles/{cycleId}/runs', { params: { path: { streamId, cycleId } }, body: {} })),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['runs', streamId] })
      onRunStarted()
    },
  })
  return (
    <section aria-labelledby="saved-cycles">
      <h3 id="saved-cycles">Saved cycles</h3>
      {cycles.isPending ? <Loading /> : <ErrorMessage error={cycles.error} />}
      {cycles.data?.length === 0 ? <p>No saved cycles yet.</p> : null}
      <ul className="list">
        {cycles.data?.map((cycle) => (
          <li key={cycle.id} className="card">
            <strong>{cycle.triggerName}</strong> <span className="muted">{cycle.description}</span>
            <PhaseList phases={cycle.phasesTemplate} />
            <button type="button" onClick={() => start.mutate(cycle.id)} disabled={start.isPending}>Start run</button>
          </li>
        ))}
      </ul>
      <ErrorMessage error={start.error} />
    </section>
  )
}
