// A stream's cycles: the prompt (Draft, Refine) beside the phase editor (edit what was drafted, or build
// from scratch), Save cycle; the save's warnings, kept until dismissed or the next save; the saved cycles, each
// with its phases and "Start run". What starts them without a person is the Automation tab.
import { useState, type FormEvent } from 'react'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api, unwrap, type CycleDefinition, type DraftResult } from '../api/client'
import { AgentName, useAgentLabels } from '../agents'
import { allPages } from '../pages'
import { Badge, Empty, ErrorMessage, Field, Loading, RelativeTime, useField } from '../ui'
import { blankPhase, CycleEditor, type Phase } from './PhaseEditor'
import { cleanPolicy, policySummary, type Policy } from './PolicyEditor'

type Draft = DraftResult

function draftCycle(streamId: string, mode: 'generate' | 'refine', prompt: string, current?: CycleDefinition): Promise<Draft> {
  return unwrap(api.POST('/api/cycles/streams/{streamId}/cycles/draft', { params: { path: { streamId } }, body: { mode, prompt, ...(current ? { current } : {}) } }))
}

/** A saved cycle's phases, read-only: number, name, agent, operators, gate. */
export function PhaseList({ phases }: { phases: Phase[] }) {
  const label = useAgentLabels()
  return (
    <ol className="phase-summary" aria-label="Phases">
      {phases.map((phase, index) => (
        <li key={phase.id}>
          <span className="phase-number" aria-hidden="true">{index + 1}</span>
          <strong>{phase.phaseName}</strong>
          <AgentName label={label(phase.agentId)} />
          <span className="muted small">operators: {phase.operatorPool.length > 0 ? phase.operatorPool.join(', ') : 'anyone'}</span>
          {phase.autoAdvance ? <Badge tone="neutral">advances on its own</Badge> : <Badge tone="warning">waits for a decision</Badge>}
        </li>
      ))}
    </ol>
  )
}

/** A saved cycle's policy in words, where it has one. */
function SavedPolicy({ cycle }: { cycle: object }) {
  const policy = (cycle as { policy?: Policy | null }).policy
  if (!policy) return null
  const cycleWide = policySummary(policy.decision)
  const phases = Object.values(policy.phases ?? {}).filter((rule) => policySummary(rule) !== '').length
  if (!cycleWide && phases === 0) return null
  return <p className="muted small">Policy: {cycleWide || 'none for the cycle'}{phases > 0 ? `; ${phases} phase${phases > 1 ? 's have' : ' has'} its own` : ''}.</p>
}

export function CyclesPanel({ streamId, onRunStarted }: { streamId: string; onRunStarted: (runId: string) => void }) {
  const queryClient = useQueryClient()
  const [prompt, setPrompt] = useState('')
  const [draft, setDraft] = useState<Draft | null>(null)
  // What the editor shows: the draft as drafted, then as the person changes it.
  const [cycle, setCycle] = useState<CycleDefinition | null>(null)
  // The decision policy is not part of a draft (docs/operators.md): kept beside it and sent only with Save cycle.
  const [policy, setPolicy] = useState<Policy>({})
  const [warnings, setWarnings] = useState<SaveWarning[]>([])
  const drafting = useMutation({
    mutationFn: (mode: 'generate' | 'refine') => draftCycle(streamId, mode, prompt, mode === 'refine' ? cycle ?? undefined : undefined),
    onSuccess: (result) => {
      setDraft(result)
      setCycle(result.draft)
    },
  })
  const save = useMutation({
    mutationFn: (definition: CycleDefinition) => {
      const clean = cleanPolicy(policy)
      return unwrap(api.POST('/api/cycles/streams/{streamId}/cycles', { params: { path: { streamId } }, body: clean ? { ...definition, policy: clean } as CycleDefinition : definition }))
    },
    onMutate: () => setWarnings([]),
    onSuccess: (saved) => {
      setDraft(null)
      setCycle(null)
      setPolicy({})
      setPrompt('')
      setWarnings((saved as { warnings?: SaveWarning[] }).warnings ?? [])
      void queryClient.invalidateQueries({ queryKey: ['cycles', streamId] })
    },
  })
  const promptField = useField(drafting.error, '/prompt')
  const submit = (event: FormEvent) => {
    event.preventDefault()
    drafting.mutate(cycle ? 'refine' : 'generate')
  }
  return (
    <>
      <h2 className="sr-only">Cycles</h2>
      <div className="cycles-layout">
        <form className="card" onSubmit={submit} aria-label="Describe the cycle">
          <Field label="Prompt" field={promptField}>
            <textarea {...promptField.input} rows={6} value={prompt} onChange={(e) => setPrompt(e.target.value)} maxLength={100000} aria-describedby={[promptField.describedBy, 'prompt-hint'].filter(Boolean).join(' ')} />
          </Field>
          <p id="prompt-hint" className="muted small">e.g. “When a ticket arrives, have the triage bot sort it, then @maria approves the answer.”</p>
          <div className="actions">
            <button type="button" className={cycle ? 'secondary' : ''} onClick={() => drafting.mutate('generate')} disabled={drafting.isPending}>Draft</button>
            <button type="button" className={cycle ? '' : 'secondary'} onClick={() => drafting.mutate('refine')} disabled={!cycle || drafting.isPending}>Refine</button>
          </div>
          {drafting.isPending ? <p aria-busy="true" aria-live="polite">Drafting…</p> : null}
          {drafting.error && !promptField.message ? <ErrorMessage error={drafting.error} /> : null}
          {draft && draft.changes.length > 0 ? (
            <><h3>Changes</h3><ul>{draft.changes.map((c, i) => <li key={i}>{c.op}: {c.detail}</li>)}</ul></>
          ) : null}
          {draft && draft.warnings.length > 0 ? (
            <><h3>Warnings</h3><ul>{draft.warnings.map((w, i) => <li key={i}>{w.detail}</li>)}</ul></>
          ) : null}
        </form>
        <section className="card" aria-label="Draft">
          <h3>{cycle ? 'Phases' : 'No draft yet'}</h3>
          {cycle ? (
            <CycleEditor cycle={cycle} onChange={setCycle} error={save.error} policy={policy} onPolicyChange={setPolicy} />
          ) : (
            <Empty title="Describe the work on the left and press Draft.">
              Or start from scratch: <button type="button" className="secondary small" onClick={() => setCycle({ triggerName: 'manual', description: '', phasesTemplate: [blankPhase(1)] })}>Add phase</button>
            </Empty>
          )}
          <div className="actions">
            <button type="button" onClick={() => cycle && save.mutate(cycle)} disabled={!cycle || save.isPending}>Save cycle</button>
            {cycle ? <button type="button" className="secondary" onClick={() => { setCycle(null); setDraft(null); setPolicy({}); save.reset() }}>Discard</button> : null}
          </div>
          <ErrorMessage error={save.error} />
        </section>
      </div>
      <div role="status" className={warnings.length > 0 ? 'save-warnings' : undefined}>
        {warnings.length > 0 ? (
          <>
            <strong>Saved, with {warnings.length === 1 ? 'a warning' : `${warnings.length} warnings`}:</strong>
            <ul>{warnings.map((w, i) => <li key={i}>{w.detail}</li>)}</ul>
            <button type="button" className="secondary small" onClick={() => setWarnings([])}>Dismiss</button>
          </>
        ) : null}
      </div>
      <SavedCycles streamId={streamId} onRunStarted={onRunStarted} />
    </>
  )
}

interface SaveWarning { code: string; detail: string }

function SavedCycles({ streamId, onRunStarted }: { streamId: string; onRunStarted: (runId: string) => void }) {
  const queryClient = useQueryClient()
  const cycles = useQuery({
    queryKey: ['cycles', streamId],
    queryFn: () => allPages((cursor) => unwrap(api.GET('/api/cycles/streams/{streamId}/cycles', { params: { path: { streamId }, query: { limit: 100, ...(cursor ? { cursor } : {}) } } }))),
  })
  const start = useMutation({
    mutationFn: (cycleId: string) => unwrap(api.POST('/api/cycles/streams/{streamId}/cycles/{cycleId}/runs', { params: { path: { streamId, cycleId } }, body: {} })),
    onSuccess: (run) => {
      void queryClient.invalidateQueries({ queryKey: ['runs', streamId] })
      onRunStarted(run.id)
    },
  })
  return (
    <>
    <section aria-labelledby="saved-cycles">
      <h3 id="saved-cycles">Saved cycles</h3>
      {cycles.isPending ? <Loading what="cycles" /> : <ErrorMessage error={cycles.error} onRetry={() => void cycles.refetch()} />}
      {cycles.data?.length === 0 ? <Empty title="No saved cycles yet.">Draft one above and save it; then start runs from here.</Empty> : null}
      <ul className="list">
        {cycles.data?.map((cycle) => (
          <li key={cycle.id} className="card">
            <div className="spread">
              <span><strong>{cycle.triggerName}</strong> <span className="muted">{cycle.description}</span></span>
              <span className="muted small">saved <RelativeTime iso={cycle.createdAt} /></span>
            </div>
            <PhaseList phases={cycle.phasesTemplate} />
            <SavedPolicy cycle={cycle} />
            <button type="button" onClick={() => start.mutate(cycle.id)} disabled={start.isPending}>Start run</button>
          </li>
        ))}
      </ul>
      <ErrorMessage error={start.error} />
    </section>
    </>
  )
}
