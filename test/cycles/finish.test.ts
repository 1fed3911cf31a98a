// Every draft goes through one finishing step (foundations item 5) and the builtin engine runs on a
// worker pool under a deadline (security item 1): a 200 from /draft is always saved by POST …/cycles,
// /healthz answers while a hostile draft runs, and a draft past its deadline is a 422 that says why.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { createBuiltinDrafter } from '../../src/drafter/builtin.js'
import { finishDraft } from '../../src/drafter/finish.js'
import { MAX_OPERATORS, MAX_PHASES } from '../../src/cycles/schemas.js'
import { build, dialects, freshDatabase, send } from '../helpers.js'
import { ADVERSARIAL, longPhases } from './fixtures/adversarial.js'

const NIL = '00000000-0000-0000-0000-000000000000'
const uuid = (n: number) => `01890a5d-ac96-774b-bcce-${n.toString(16).padStart(12, '0')}`
const phase = (n: number, overrides: Record<string, unknown> = {}) => ({ id: uuid(n), agentId: NIL, goal: 'g', instructions: 'i', autoAdvance: true, phaseName: `P${n}`, operatorPool: [], ...overrides })

describe('finishDraft', () => {
  it('caps phases and operators, makes ids unique, and warns for each', () => {
    const phases = Array.from({ length: MAX_PHASES + 5 }, (_, i) => phase(i + 1))
    phases[1] = phase(1, { operatorPool: Array.from({ length: 150 }, (_, i) => `op${i}`).concat(['op0']) })
    const outcome = finishDraft({
      draft: { triggerName: 'manual', description: 'd', phasesTemplate: phases },
      changes: phases.map((p) => ({ op: 'add' as const, phaseId: p.id, detail: 'added' })),
      warnings: [],
    })
    const finished = outcome.draft.phasesTemplate
    assert.equal(finished.length, MAX_PHASES)
    assert.equal(outcome.changes.length, MAX_PHASES, 'changes of dropped phases are dropped too')
    assert.equal(finished[1]!.operatorPool.length, MAX_OPERATORS)
    assert.equal(finished[1]!.operatorPool[0], 'op0')
    assert.notEqual(finished[1]!.id, finished[0]!.id, 'a repeated id is replaced')
    assert.deepEqual(outcome.warnings.map((w) => w.code).sort(), ['repeated-id', 'too-many-operators', 'too-many-steps'])
  })

  it('leaves a draft within bounds exactly as it was', () => {
    const outcome = { draft: { triggerName: 'manual', description: 'd', phasesTemplate: [phase(1), phase(2, { operatorPool: ['a', 'b'] })] }, changes: [], warnings: [] }
    assert.deepEqual(finishDraft(outcome), outcome)
  })
})

for (const dialect of dialects()) {
  describe(`finished drafts are saved as they are (${dialect})`, () => {
    let app: FastifyInstance
    let streamId: string
    before(async () => {
      app = await build(dialect)
      streamId = (await send(app, 'POST', '/api/streams', { name: 'finish' })).json().id
      await send(app, 'POST', '/api/agents', { name: 'Analyst', instructions: 'Analyse data and build charts.' })
    })
    after(() => app.close())

    const draftThenSave = async (body: unknown) => {
      const drafted = await send(app, 'POST', `/api/cycles/streams/${streamId}/cycles/draft`, body)
      assert.equal(drafted.statusCode, 200, drafted.body)
      const saved = await send(app, 'POST', `/api/cycles/streams/${streamId}/cycles`, drafted.json().draft)
      assert.equal(saved.statusCode, 201, saved.body)
      return drafted.json()
    }

    it('a prompt naming 150 @handles drafts a phase with 100 operators, which POST …/cycles accepts', async () => {
      const handles = Array.from({ length: 150 }, (_, i) => `@person${i}`).join(', ')
      const result = await draftThenSave({ mode: 'generate', prompt: `Analyse the data with ${handles}.` })
      assert.equal(result.draft.phasesTemplate[0].operatorPool.length, MAX_OPERATORS)
      assert.ok(result.warnings.some((w: { code: string }) => w.code === 'too-many-operators'))
    })

    it('150 steps draft 100 phases, and a refine that adds @handles to a full pool stays within 100', async () => {
      const steps = await draftThenSave({ mode: 'generate', prompt: Array.from({ length: 150 }, (_, i) => `- Analyse table ${i}`).join('\n') })
      assert.equal(steps.draft.phasesTemplate.length, MAX_PHASES)
      const full = { triggerName: 't', description: 'd', phasesTemplate: [phase(1, { operatorPool: Array.from({ length: 100 }, (_, i) => `op${i}`) })] }
      const refined = await draftThenSave({ mode: 'refine', prompt: 'Add @late1 and @late2 to P1.', current: full })
      assert.equal(refined.draft.phasesTemplate[0].operatorPool.length, MAX_OPERATORS)
    })

    it('a hostile refine on 100 long-named phases answers, and /healthz answers while it runs', async () => {
      const current = longPhases(NIL)
      for (const prompt of [ADVERSARIAL.drops, ADVERSARIAL.calls, ADVERSARIAL.swaps]) {
        let draftDone = false
        const drafting = send(app, 'POST', `/api/cycles/streams/${streamId}/cycles/draft`, { mode: 'refine', prompt, current }).then((res) => {
          draftDone = true
          return res
        })
        const health = await app.inject({ method: 'GET', url: '/healthz' })
        assert.equal(health.statusCode, 200)
        const healthBeforeDraft = !draftDone
        const res = await drafting
        assert.equal(res.statusCode, 200, res.body)
        assert.ok(res.json().warnings.some((w: { code: string }) => w.code === 'too-many-instructions'))
        assert.ok(healthBeforeDraft, `${String(prompt).slice(0, 10)}: ` + '/healthz answered while the draft was still running')
      }
    })
  })
}

describe('the drafting deadline', () => {
  let app: FastifyInstance
  before(async () => {
    const database = await freshDatabase('sqlite')
    app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: database.url }), { drafter: createBuiltinDrafter({ deadlineMs: 1 }) })
    app.addHook('onClose', () => database.drop())
  })
  after(() => app.close())

  it('a draft that runs past its deadline is stopped and answered 422, and the next draft still works', async () => {
    const streamId = (await send(app, 'POST', '/api/streams', { name: 'deadline' })).json().id
    const res = await send(app, 'POST', `/api/cycles/streams/${streamId}/cycles/draft`, { mode: 'generate', prompt: ADVERSARIAL.verbSeries })
    assert.equal(res.statusCode, 422)
    assert.equal(res.json().type, 'urn:tandem:problem:unprocessable')
    assert.match(res.json().detail, /longer than 1 ms to draft and was stopped/)
    const health = await app.inject({ method: 'GET', url: '/healthz' })
    assert.equal(health.statusCode, 200)
  })
})
