// Decision policies (docs/operators.md "Decision policies"): a saved cycle's optional `policy`, checked on save, and
// resolved per phase (the phase's entry over the cycle's `decision`, field by field) when a run is created.
import Type, { type Static } from 'typebox'
import { Nullable, StringEnum } from '../http/schemas.js'
import type { FieldError } from '../http/problem.js'

export const MIN_DURATION = 'PT5S'
export const MAX_DURATION = 'P90D'
const MIN_DURATION_MS = 5_000
const MAX_DURATION_MS = 90 * 86_400_000
export const MAX_QUORUM = 10
export const ON_EXPIRE = ['reject', 'approve', 'fail'] as const
export type OnExpire = (typeof ON_EXPIRE)[number]

const Duration = Type.String({ maxLength: 40, description: `an ISO 8601 duration of days, hours, minutes and seconds (or weeks), between ${MIN_DURATION} and ${MAX_DURATION}, e.g. PT1H` })

export const DecisionPolicy = Type.Object(
  {
    remindAfter: Type.Optional(Duration),
    escalateAfter: Type.Optional(Duration),
    expireAfter: Type.Optional(Duration),
    onExpire: Type.Optional(StringEnum(ON_EXPIRE, { description: 'what the system decides at expiry (default reject); fail fails the phase with decision-expired' })),
    quorum: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_QUORUM, description: 'approves by distinct principals the phase needs (default 1)' })),
  },
  { additionalProperties: false, title: 'DecisionPolicy' },
)
export type DecisionPolicy = Static<typeof DecisionPolicy>

export const CyclePolicy = Type.Object(
  {
    decision: Type.Optional(DecisionPolicy),
    // additionalProperties rather than Type.Record's patternProperties: one shape in request and response documents.
    phases: Type.Optional(
      Type.Unsafe<Record<string, DecisionPolicy>>({ type: 'object', additionalProperties: DecisionPolicy, maxProperties: 100, description: 'by phase id (a phase of phasesTemplate): overrides `decision` field by field' }),
    ),
  },
  { additionalProperties: false, title: 'CyclePolicy', description: 'reminders, escalation, expiry and quorum of the cycle\'s decisions (docs/operators.md)' },
)
export type CyclePolicy = Static<typeof CyclePolicy>

/** A phase's policy as a run holds it: every field resolved (null: no such timer). */
export const PhasePolicy = Type.Object(
  {
    remindAfter: Nullable(Type.String()),
    escalateAfter: Nullable(Type.String()),
    expireAfter: Nullable(Type.String()),
    onExpire: StringEnum(ON_EXPIRE),
    quorum: Type.Integer({ minimum: 1, maximum: MAX_QUORUM }),
  },
  { title: 'PhasePolicy' },
)
export type PhasePolicy = Static<typeof PhasePolicy>

export const DEFAULT_PHASE_POLICY: PhasePolicy = { remindAfter: null, escalateAfter: null, expireAfter: null, onExpire: 'reject', quorum: 1 }

const DURATION = /^P(?:(\d{1,6})W)?(?:(\d{1,6})D)?(?:T(?:(\d{1,8})H)?(?:(\d{1,10})M)?(?:(\d{1,12})S)?)?$/

/**
 * An ISO 8601 duration in milliseconds, or why not. Weeks, days, hours, minutes and whole seconds only: years and
 * months have no fixed length (use days), and fractions are refused rather than rounded.
 */
export function parseDuration(text: string): number | { problem: string } {
  const match = DURATION.exec(text)
  const bounds = `between ${MIN_DURATION} and ${MAX_DURATION}`
  if (!match || text === 'P' || text.endsWith('T')) {
    if (/^P(?:\d+[YM])/.test(text)) return { problem: `must be ${bounds} in weeks, days, hours, minutes or seconds: years and months have no fixed length (write days, e.g. P30D)` }
    return { problem: `must be an ISO 8601 duration ${bounds}, such as PT30M, PT4H or P1D` }
  }
  const [weeks, days, hours, minutes, seconds] = match.slice(1).map((part) => Number(part ?? 0)) as [number, number, number, number, number]
  const ms = ((((weeks * 7 + days) * 24 + hours) * 60 + minutes) * 60 + seconds) * 1000
  if (ms < MIN_DURATION_MS) return { problem: `must be at least ${MIN_DURATION}` }
  if (ms > MAX_DURATION_MS) return { problem: `must be at most ${MAX_DURATION} (90 days)` }
  return ms
}

/** The duration of an already checked policy field, in milliseconds. */
export function durationMs(text: string): number {
  const ms = parseDuration(text)
  if (typeof ms !== 'number') throw new Error(`unchecked duration ${text}: ${ms.problem}`)
  return ms
}

const DURATION_FIELDS = ['remindAfter', 'escalateAfter', 'expireAfter'] as const

const escapePointer = (token: string) => token.replace(/~/g, '~0').replace(/\//g, '~1')

function checkFields(policy: DecisionPolicy, at: string, errors: FieldError[]): void {
  for (const field of DURATION_FIELDS) {
    const value = policy[field]
    if (value === undefined) continue
    const ms = parseDuration(value)
    if (typeof ms !== 'number') errors.push({ pointer: `${at}/${field}`, detail: ms.problem })
  }
}

/**
 * The policy's problems beyond its schema: each duration out of its bounds or not ISO 8601, and each phase entry
 * whose id is not a phase of the cycle (a typo would otherwise silently apply nothing). Phase ids compare in
 * lower case, as the saved phases' ids are.
 */
export function policyProblems(policy: CyclePolicy, phaseIds: string[], base = '/policy'): FieldError[] {
  const errors: FieldError[] = []
  if (policy.decision) checkFields(policy.decision, `${base}/decision`, errors)
  const known = new Set(phaseIds.map((id) => id.toLowerCase()))
  for (const [id, entry] of Object.entries(policy.phases ?? {})) {
    const at = `${base}/phases/${escapePointer(id)}`
    if (!known.has(id.toLowerCase())) errors.push({ pointer: at, detail: 'is not the id of a phase of this cycle (phasesTemplate[].id)' })
    else checkFields(entry, at, errors)
  }
  return errors
}

/** The policy as saved: phase ids in lower case, empty parts left out; null when nothing is left. */
export function normalizePolicy(policy: CyclePolicy | undefined): CyclePolicy | null {
  if (!policy) return null
  const out: CyclePolicy = {}
  if (policy.decision && Object.keys(policy.decision).length > 0) out.decision = policy.decision
  const phases = Object.entries(policy.phases ?? {}).filter(([, entry]) => Object.keys(entry).length > 0)
  if (phases.length > 0) out.phases = Object.fromEntries(phases.map(([id, entry]) => [id.toLowerCase(), entry]))
  return Object.keys(out).length > 0 ? out : null
}

/** One phase's policy: its entry over the cycle's `decision`, field by field, over the defaults. */
export function resolvePhasePolicy(policy: CyclePolicy | null | undefined, phaseId: string): PhasePolicy {
  const entry = policy?.phases?.[phaseId.toLowerCase()] ?? {}
  const merged = { ...DEFAULT_PHASE_POLICY, ...policy?.decision, ...entry }
  return { remindAfter: merged.remindAfter ?? null, escalateAfter: merged.escalateAfter ?? null, expireAfter: merged.expireAfter ?? null, onExpire: merged.onExpire ?? 'reject', quorum: merged.quorum ?? 1 }
}
