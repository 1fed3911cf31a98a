// A saved cycle's decision policy (docs/operators.md "Decision policies"): for the whole cycle, remind, escalate
// and expire after a duration, what expiry decides, and the quorum; per gated phase, overrides of the same
// fields. Durations are typed "90 minutes", "1h", "1 day" or ISO 8601 (PT5S to P90D), sent as ISO and read back in
// words ("1 hour"), the ISO form in the field's title.
// A 400's pointers (/policy/decision/remindAfter, /policy/phases/<id>/quorum) are shown beside their fields.
import { useState } from 'react'
import { Field, useField } from '../ui'

export type OnExpire = 'reject' | 'approve' | 'fail'
export interface PolicyRule { remindAfter?: string; escalateAfter?: string; expireAfter?: string; onExpire?: OnExpire; quorum?: number }
export interface Policy { decision?: PolicyRule; phases?: Record<string, PolicyRule> }

const UNIT: Array<[RegExp, 'D' | 'H' | 'M' | 'S']> = [[/^d(ays?)?$/i, 'D'], [/^h((ou)?rs?)?$/i, 'H'], [/^m(in(ute)?s?)?$/i, 'M'], [/^s(ec(ond)?s?)?$/i, 'S']]

/** "90 minutes", "1h", "1 day", "1 hour 30 minutes" → ISO 8601 ("PT90M", "PT1H", "P1D", "PT1H30M"); ISO and anything else kept (the server checks it). */
export function toIsoDuration(text: string): string {
  const t = text.trim()
  const parts = [...t.matchAll(/(\d+)\s*([a-z]+)/gi)]
  if (parts.length === 0 || parts.map((m) => m[0]).join('').replace(/\s/g, '') !== t.replace(/\s|,|and/gi, '')) return t.toUpperCase()
  const amounts: Partial<Record<'D' | 'H' | 'M' | 'S', number>> = {}
  for (const [, n, word] of parts) {
    const unit = UNIT.find(([re]) => re.test(word!))?.[1]
    if (!unit || /^P/i.test(t)) return t.toUpperCase()
    amounts[unit] = (amounts[unit] ?? 0) + Number(n)
  }
  const time = (['H', 'M', 'S'] as const).filter((u) => amounts[u]).map((u) => `${amounts[u]}${u}`).join('')
  return `P${amounts.D ? `${amounts.D}D` : ''}${time ? `T${time}` : ''}`
}

const WORDS: Record<string, string> = { D: 'day', H: 'hour', M: 'minute', S: 'second' }

/** "PT1H30M" → "1 hour 30 minutes", "P1D" → "1 day"; not ISO: as given. */
export function durationWords(iso: string): string {
  const m = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/.exec(iso)
  if (!m) return iso
  const parts = ([[m[1], 'D'], [m[2], 'H'], [m[3], 'M'], [m[4], 'S']] as const).filter(([n]) => n !== undefined).map(([n, u]) => `${Number(n)} ${WORDS[u]}${Number(n) === 1 ? '' : 's'}`)
  return parts.length > 0 ? parts.join(' ') : iso
}

/** Empty fields and empty rules left out; null when nothing is set (the cycle is saved without a policy). */
export function cleanPolicy(policy: Policy): Policy | null {
  const clean = (rule: PolicyRule | undefined): PolicyRule | undefined => {
    if (!rule) return undefined
    const kept = Object.fromEntries(Object.entries(rule).filter(([, v]) => v !== undefined && v !== '' && !(typeof v === 'number' && Number.isNaN(v)))) as PolicyRule
    return Object.keys(kept).length > 0 ? kept : undefined
  }
  const decision = clean(policy.decision)
  const phases = Object.fromEntries(Object.entries(policy.phases ?? {}).map(([id, rule]) => [id, clean(rule)]).filter(([, rule]) => rule !== undefined)) as Record<string, PolicyRule>
  const out: Policy = {}
  if (decision) out.decision = decision
  if (Object.keys(phases).length > 0) out.phases = phases
  return Object.keys(out).length > 0 ? out : null
}

export function policySummary(rule: PolicyRule | undefined): string {
  if (!rule) return ''
  const parts: string[] = []
  if (rule.remindAfter) parts.push(`remind after ${durationWords(rule.remindAfter)}`)
  if (rule.escalateAfter) parts.push(`escalate after ${durationWords(rule.escalateAfter)}`)
  if (rule.expireAfter) parts.push(`expire after ${durationWords(rule.expireAfter)} (${rule.onExpire ?? 'reject'})`)
  if (rule.quorum && rule.quorum > 1) parts.push(`${rule.quorum} approvals`)
  return parts.join(', ')
}

function DurationInput({ label, value, error, pointer, onChange }: { label: string; value: string | undefined; error: unknown; pointer: string; onChange: (v: string | undefined) => void }) {
  const field = useField(error, pointer)
  const [text, setText] = useState(value ? durationWords(value) : '')
  const hint = `${field.input.id}-hint`
  return (
    <Field label={label} field={field}>
      <input
        {...field.input} aria-describedby={[field.describedBy, hint].filter(Boolean).join(' ')} value={text} size={10} title={value}
        onChange={(e) => setText(e.target.value)}
        onBlur={() => {
          const iso = text.trim() === '' ? undefined : toIsoDuration(text)
          setText(iso ? durationWords(iso) : '')
          onChange(iso)
        }}
      />
      <small id={hint} className="muted">e.g. 90 minutes, 1h, 1 day</small>
    </Field>
  )
}

/** The fields of one rule; `cycleWide` adds remind and escalate (a phase overrides expiry and quorum, as in the contract's example). */
export function RuleFields({ rule, onChange, error, at, cycleWide }: { rule: PolicyRule; onChange: (rule: PolicyRule) => void; error: unknown; at: string; cycleWide: boolean }) {
  const onExpire = useField(error, `${at}/onExpire`)
  const quorum = useField(error, `${at}/quorum`)
  const set = (patch: Partial<PolicyRule>) => onChange({ ...rule, ...patch })
  return (
    <div className="policy-fields">
      {cycleWide ? <DurationInput label="Remind after" value={rule.remindAfter} error={error} pointer={`${at}/remindAfter`} onChange={(v) => set({ remindAfter: v })} /> : null}
      {cycleWide ? <DurationInput label="Escalate after" value={rule.escalateAfter} error={error} pointer={`${at}/escalateAfter`} onChange={(v) => set({ escalateAfter: v })} /> : null}
      <DurationInput label="Expire after" value={rule.expireAfter} error={error} pointer={`${at}/expireAfter`} onChange={(v) => set({ expireAfter: v })} />
      <Field label="On expiry" field={onExpire}>
        <select {...onExpire.input} value={rule.onExpire ?? ''} onChange={(e) => set({ onExpire: (e.target.value || undefined) as OnExpire | undefined })}>
          <option value="">{cycleWide ? 'reject (default)' : 'as the cycle says'}</option>
          <option value="reject">reject</option>
          <option value="approve">approve</option>
          <option value="fail">fail the phase</option>
        </select>
      </Field>
      <Field label="Quorum" field={quorum}>
        <input
          {...quorum.input} type="number" min={1} max={10} value={rule.quorum ?? ''} placeholder={cycleWide ? '1' : 'as the cycle'}
          onChange={(e) => set({ quorum: e.target.value === '' ? undefined : Number(e.target.value) })}
        />
      </Field>
    </div>
  )
}

/** The cycle-wide policy, below the phases of the editor. */
export function PolicyEditor({ policy, onChange, error }: { policy: Policy; onChange: (policy: Policy) => void; error: unknown }) {
  return (
    <fieldset className="policy">
      <legend>Decision policy</legend>
      <small className="muted">For every phase that waits for a decision (and for tool approvals and questions): a reminder, an escalation to the admins, an expiry that decides, and how many approvals it takes. Leave empty for none.</small>
      <RuleFields rule={policy.decision ?? {}} onChange={(decision) => onChange({ ...policy, decision })} error={error} at="/policy/decision" cycleWide />
    </fieldset>
  )
}

/** A gated phase's overrides, inside its card in the editor. */
export function PhasePolicy({ phaseId, phaseName, policy, onChange, error }: { phaseId: string; phaseName: string; policy: Policy; onChange: (policy: Policy) => void; error: unknown }) {
  const rule = policy.phases?.[phaseId] ?? {}
  const set = (next: PolicyRule) => onChange({ ...policy, phases: { ...policy.phases, [phaseId]: next } })
  const open = Object.values(rule).some((v) => v !== undefined && v !== '')
  return (
    <details className="phase-policy" open={open || undefined}>
      <summary>Policy of {phaseName}</summary>
      <RuleFields rule={rule} onChange={set} error={error} at={`/policy/phases/${phaseId}`} cycleWide={false} />
    </details>
  )
}
