// The phase editor beside the prompt: a cycle's trigger and description, and its phases — add, remove,
// reorder, each phase's agent (picked from the list, shown with its avatar), its operators as chips and its
// gate as a switch. A 400 from saving is shown beside the field its pointer names.
import { useState, type KeyboardEvent } from 'react'
import { ApiError, type CycleDefinition } from '../api/client'
import { Avatar, agentText, NIL_UUID, useAgentLabels, useAgents } from '../agents'
import { Field, useField } from '../ui'
import { PhasePolicy, PolicyEditor, type Policy } from './PolicyEditor'

export type Phase = CycleDefinition['phasesTemplate'][number]

/** A fresh UUID (version 4) for a new phase; crypto.getRandomValues works outside secure contexts too. */
function newId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  bytes[6] = (bytes[6]! & 0x0f) | 0x40
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

export const blankPhase = (n: number): Phase => ({ id: newId(), agentId: NIL_UUID, phaseName: `Phase ${n}`, goal: '', instructions: '', autoAdvance: true, operatorPool: [] })

export function CycleEditor({ cycle, onChange, error, policy, onPolicyChange }: {
  cycle: CycleDefinition; onChange: (cycle: CycleDefinition) => void; error: unknown; policy?: Policy; onPolicyChange?: (policy: Policy) => void
}) {
  const phases = cycle.phasesTemplate
  const setPhases = (next: Phase[]) => onChange({ ...cycle, phasesTemplate: next })
  const update = (index: number, patch: Partial<Phase>) => setPhases(phases.map((p, i) => (i === index ? { ...p, ...patch } : p)))
  const move = (index: number, by: -1 | 1) => {
    const next = [...phases]
    const [moved] = next.splice(index, 1)
    next.splice(index + by, 0, moved!)
    setPhases(next)
  }
  const trigger = useField(error, '/triggerName')
  const description = useField(error, '/description')
  const listError = error instanceof ApiError ? error.problem.errors?.filter((e) => e.pointer === '/phasesTemplate').map((e) => e.detail).join('; ') : undefined
  return (
    <>
      <div className="grid-2">
        <Field label="Trigger name" field={trigger}>
          <input {...trigger.input} value={cycle.triggerName} onChange={(e) => onChange({ ...cycle, triggerName: e.target.value })} />
        </Field>
        <Field label="Description" field={description}>
          <input {...description.input} value={cycle.description} onChange={(e) => onChange({ ...cycle, description: e.target.value })} />
        </Field>
      </div>
      <ol className="phase-editor" aria-label="Phases">
        {phases.map((phase, index) => (
          <PhaseCard
            key={phase.id}
            phase={phase}
            index={index}
            count={phases.length}
            error={error}
            onChange={(patch) => update(index, patch)}
            onMove={(by) => move(index, by)}
            onRemove={() => setPhases(phases.filter((_, i) => i !== index))}
            policy={policy} onPolicyChange={onPolicyChange}
          />
        ))}
      </ol>
      {phases.length === 0 ? <p className="muted">No phases: add one.</p> : null}
      {listError ? <p className="field-error">{listError}</p> : null}
      <button type="button" className="secondary" onClick={() => setPhases([...phases, blankPhase(phases.length + 1)])}>Add phase</button>
      {policy && onPolicyChange ? <PolicyEditor policy={policy} onChange={onPolicyChange} error={error} /> : null}
    </>
  )
}

function PhaseCard({ phase, index, count, error, onChange, onMove, onRemove, policy, onPolicyChange }: {
  phase: Phase; index: number; count: number; error: unknown
  onChange: (patch: Partial<Phase>) => void; onMove: (by: -1 | 1) => void; onRemove: () => void
  policy?: Policy; onPolicyChange?: (policy: Policy) => void
}) {
  const agents = useAgents()
  const label = useAgentLabels()
  const at = `/phasesTemplate/${index}`
  const name = useField(error, `${at}/phaseName`)
  const agent = useField(error, `${at}/agentId`)
  const goal = useField(error, `${at}/goal`)
  const instructions = useField(error, `${at}/instructions`)
  const pool = useField(error, `${at}/operatorPool`)
  const gate = useField(error, `${at}/autoAdvance`)
  const [handle, setHandle] = useState('')
  const known = phase.agentId === NIL_UUID || agents.data?.some((a) => a.id.toLowerCase() === phase.agentId.toLowerCase())
  const addOperator = () => {
    const clean = handle.trim().replace(/^@/, '')
    if (clean && !phase.operatorPool.some((h) => h.replace(/^@/, '').toLowerCase() === clean.toLowerCase())) onChange({ operatorPool: [...phase.operatorPool, clean] })
    setHandle('')
  }
  const onHandleKey = (event: KeyboardEvent) => {
    if (event.key === 'Enter' || event.key === ',') {
      event.preventDefault()
      addOperator()
    }
  }
  return (
    <li aria-label={`Phase ${index + 1}: ${phase.phaseName}`}>
      <div className="phase-head">
        <span className="phase-number" aria-hidden="true">{index + 1}</span>
        <input {...name.input} aria-label="Phase name" value={phase.phaseName} onChange={(e) => onChange({ phaseName: e.target.value })} />
        <button type="button" className="ghost small" onClick={() => onMove(-1)} disabled={index === 0} aria-label={`Move ${phase.phaseName} up`} title="Move up">↑</button>
        <button type="button" className="ghost small" onClick={() => onMove(1)} disabled={index === count - 1} aria-label={`Move ${phase.phaseName} down`} title="Move down">↓</button>
        <button type="button" className="ghost small" onClick={onRemove}>Remove phase</button>
      </div>
      {name.message}
      <div className="field">
        <label htmlFor={agent.input.id}>Agent</label>
        <div className="agent-pick">
          <Avatar label={label(phase.agentId)} size="sm" />
          <select {...agent.input} value={known ? phase.agentId.toLowerCase() : phase.agentId} onChange={(e) => onChange({ agentId: e.target.value })}>
            <option value={NIL_UUID}>People (no agent)</option>
            {agents.data?.map((a) => <option key={a.id} value={a.id}>{agentText(label(a.id))}</option>)}
            {known ? null : <option value={phase.agentId}>{agentText(label(phase.agentId))}</option>}
          </select>
        </div>
        {agent.message}
      </div>
      <Field label="Goal" field={goal}>
        <textarea {...goal.input} rows={2} value={phase.goal} onChange={(e) => onChange({ goal: e.target.value })} />
      </Field>
      <Field label="Phase instructions" field={instructions}>
        <textarea {...instructions.input} rows={2} value={phase.instructions} onChange={(e) => onChange({ instructions: e.target.value })} />
      </Field>
      <div className="field">
        <span className="label" id={`${pool.input.id}-label`}>Operators</span>
        <ul className="chips" aria-labelledby={`${pool.input.id}-label`}>
          {phase.operatorPool.length === 0 ? <li className="muted small">Anyone in the workspace</li> : null}
          {phase.operatorPool.map((h) => (
            <li key={h} className="chip">@{h.replace(/^@/, '')}<button type="button" aria-label={`Remove @${h.replace(/^@/, '')}`} onClick={() => onChange({ operatorPool: phase.operatorPool.filter((x) => x !== h) })}>×</button></li>
          ))}
        </ul>
        <div className="chip-input">
          <input {...pool.input} aria-label="Add operator" title="A handle, e.g. @maria; Enter adds it" value={handle} onChange={(e) => setHandle(e.target.value)} onKeyDown={onHandleKey} />
          <button type="button" className="secondary small" onClick={addOperator} disabled={handle.trim() === ''}>Add</button>
        </div>
        {pool.message}
      </div>
      <label>
        <input {...gate.input} type="checkbox" role="switch" checked={!phase.autoAdvance} onChange={(e) => onChange({ autoAdvance: !e.target.checked })} />
        Waits for a decision (gate)
      </label>
      {gate.message}
      {!phase.autoAdvance && policy && onPolicyChange ? <PhasePolicy phaseId={phase.id} phaseName={phase.phaseName} policy={policy} onChange={onPolicyChange} error={error} /> : null}
    </li>
  )
}
