// Scores a drafting engine on a cases file in the form of shared/drafting/examples.json, through the
// real HTTP route: agents are created in a workspace, each case is drafted and compared with `expect`.
import type { FastifyInstance } from 'fastify'
import { NIL_UUID } from '../http/schemas.js'
import { newId } from '../ids.js'
import type { CycleDefinition, DraftResult, Phase } from '../cycles/schemas.js'

interface CurrentPhase extends Omit<Phase, 'id' | 'agentId'> {
  key: string
  agent: string | null
}

interface ExpectedPhase {
  keep?: string
  agent?: string | null
  operatorPool?: string[]
  autoAdvance?: boolean
  phaseName?: string
  /** The goal, or the goals that each pass (a person may word an outcome in more than one way). */
  goal?: string | string[]
  instructions?: string | string[]
}

interface Case {
  id: string
  /** What the case exercises ("refine: move", "agentive nouns"), for per-family rates. */
  family?: string
  /** `tuning` or `held-out`: the held-out half is never looked at while tuning the engine. */
  split?: string
  mode: string
  prompt: string
  current?: string
  expect: { triggerName?: string; description?: string; warnings?: boolean; phases: ExpectedPhase[] }
}

export interface CasesFile {
  agents: Array<Record<string, unknown> & { name: string }>
  currents?: Record<string, { triggerName: string; description: string; phases: CurrentPhase[] }>
  cases: Case[]
}

export interface CaseResult {
  id: string
  family: string
  split: string
  pass: boolean
  reasons: string[]
}

async function call(app: FastifyInstance, method: 'POST', url: string, body: unknown) {
  const response = await app.inject({ method, url, payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } })
  return { status: response.statusCode, json: response.json() }
}

const show = (value: unknown) => JSON.stringify(value)

function compareCase(testCase: Case, result: DraftResult, current: CycleDefinition | undefined, keys: Map<string, Phase>, agentIds: Map<string, string>): string[] {
  const reasons: string[] = []
  const { expect } = testCase
  const agentName = new Map([...agentIds].map(([name, id]) => [id, name]))
  const nameOf = (id: string) => (id === NIL_UUID ? null : (agentName.get(id) ?? `unknown agent ${id}`))
  if (expect.triggerName !== undefined && result.draft.triggerName !== expect.triggerName) {
    reasons.push(`triggerName is ${show(result.draft.triggerName)}, expected ${show(expect.triggerName)}`)
  }
  if (expect.description !== undefined && result.draft.description !== expect.description) {
    reasons.push(`description is ${show(result.draft.description)}, expected ${show(expect.description)}`)
  }
  if (expect.warnings === true && result.warnings.length === 0) reasons.push('expected at least one warning, got none')
  if (expect.warnings === false && result.warnings.length > 0) reasons.push(`expected no warning, got ${show(result.warnings.map((w) => w.detail))}`)
  const phases = result.draft.phasesTemplate
  if (phases.length !== expect.phases.length) {
    reasons.push(`${phases.length} phases (${phases.map((p) => `${show(p.phaseName)} → ${nameOf(p.agentId)}`).join(', ')}), expected ${expect.phases.length}`)
    return reasons
  }
  expect.phases.forEach((wanted, index) => {
    const phase = phases[index] as Phase
    const at = `phase ${index + 1} (${show(phase.phaseName)})`
    let base: Partial<Phase> = {}
    if (wanted.keep !== undefined) {
      const original = keys.get(wanted.keep)
      if (!original || !current) return void reasons.push(`${at}: no current phase ${wanted.keep}`)
      if (phase.id !== original.id) return void reasons.push(`${at}: expected kept phase ${wanted.keep} (same id)`)
      base = { ...original }
    }
    const expected: Partial<Phase> = { ...base }
    if (wanted.agent !== undefined) expected.agentId = wanted.agent === null ? NIL_UUID : agentIds.get(wanted.agent)
    if (wanted.operatorPool !== undefined) expected.operatorPool = wanted.operatorPool
    if (wanted.autoAdvance !== undefined) expected.autoAdvance = wanted.autoAdvance
    if (wanted.phaseName !== undefined) expected.phaseName = wanted.phaseName
    for (const field of ['goal', 'instructions'] as const) {
      const accepted = wanted[field]
      if (accepted === undefined) continue
      delete expected[field] // a kept phase's goal or instructions given here replace the original's
      const list = Array.isArray(accepted) ? accepted : [accepted]
      if (!list.includes(phase[field])) reasons.push(`${at}: ${field} is ${show(phase[field])}, expected ${list.map(show).join(' or ')}`)
    }
    for (const [field, value] of Object.entries(expected) as Array<[keyof Phase, unknown]>) {
      if (show(phase[field]) !== show(value)) {
        const got = field === 'agentId' ? nameOf(phase.agentId) : phase[field]
        const want = field === 'agentId' ? nameOf(value as string) : value
        reasons.push(`${at}: ${field} is ${show(got)}, expected ${show(want)}`)
      }
    }
  })
  return reasons
}

const labels = (testCase: Case) => ({ id: testCase.id, family: testCase.family ?? testCase.mode, split: testCase.split ?? 'all' })

export async function evaluateCases(app: FastifyInstance, file: CasesFile): Promise<CaseResult[]> {
  const agentIds = new Map<string, string>()
  for (const agent of file.agents) {
    const created = await call(app, 'POST', '/api/agents', agent)
    if (created.status !== 201) throw new Error(`could not create agent ${agent.name}: ${show(created.json)}`)
    agentIds.set(agent.name, created.json.id)
  }
  const stream = await call(app, 'POST', '/api/streams', { name: 'drafter evaluation' })
  const results: CaseResult[] = []
  for (const testCase of file.cases) {
    const keys = new Map<string, Phase>()
    let current: CycleDefinition | undefined
    const source = testCase.current ? file.currents?.[testCase.current] : undefined
    if (testCase.current && !source) throw new Error(`case ${testCase.id}: no current ${testCase.current}`)
    if (source) {
      current = {
        triggerName: source.triggerName,
        description: source.description,
        phasesTemplate: source.phases.map(({ key, agent, ...rest }) => {
          const phase: Phase = { id: newId(), agentId: agent === null ? NIL_UUID : (agentIds.get(agent) ?? NIL_UUID), ...rest }
          keys.set(key, phase)
          return phase
        }),
      }
    }
    const response = await call(app, 'POST', `/api/cycles/streams/${stream.json.id}/cycles/draft`, { mode: testCase.mode, prompt: testCase.prompt, ...(current ? { current } : {}) })
    if (response.status !== 200) {
      results.push({ ...labels(testCase), pass: false, reasons: [`status ${response.status}: ${show(response.json)}`] })
      continue
    }
    const reasons = compareCase(testCase, response.json, current, keys, agentIds)
    results.push({ ...labels(testCase), pass: reasons.length === 0, reasons })
  }
  return results
}
