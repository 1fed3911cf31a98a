// POST /api/cycles/streams/{streamId}/cycles/draft: request validation (spec 2.3 and our bounds), modes,
// 404 and 422, assignment within the workspace, and the reply's shape.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, pointers, send } from '../helpers.js'
import { bearer, createKey } from '../auth.js'

const NIL = '00000000-0000-0000-0000-000000000000'
const phase = (overrides: Record<string, unknown> = {}) => ({
  id: '01890a5d-ac96-774b-bcce-b302099a8057',
  agentId: NIL,
  goal: 'g',
  instructions: 'i',
  autoAdvance: true,
  phaseName: 'Triage',
  operatorPool: [],
  ...overrides,
})
const cycle = (phases: Array<Record<string, unknown>> = [phase()]) => ({ triggerName: 'manual', description: 'd', phasesTemplate: phases })
const uuid = (n: number) => `01890a5d-ac96-774b-bcce-${n.toString(16).padStart(12, '0')}`

for (const dialect of dialects()) {
  describe(`draft a cycle (${dialect})`, () => {
    let app: FastifyInstance
    let streamId: string
    let triageId: string
    before(async () => {
      app = await build(dialect)
      streamId = (await send(app, 'POST', '/api/streams', { name: 'drafts' })).json().id
      triageId = (await send(app, 'POST', '/api/agents', { name: 'Triage Bot', instructions: 'Classify and prioritise incoming support tickets.' })).json().id
    })
    after(() => app.close())

    const draft = (body: unknown, stream = streamId) => send(app, 'POST', `/api/cycles/streams/${stream}/cycles/draft`, body)

    it('generates a cycle: 200, every phase with all seven fields, fresh UUIDv7 ids, builtin engine', async () => {
      const res = await draft({ mode: 'generate', prompt: 'When a ticket arrives, triage the ticket, then have @maria approve it.' })
      assert.equal(res.statusCode, 200)
      const body = res.json()
      assert.deepEqual(Object.keys(body).sort(), ['changes', 'draft', 'engine', 'mode', 'warnings'])
      assert.equal(body.mode, 'generate')
      assert.equal(body.engine, 'builtin')
      assert.equal(body.draft.triggerName, 'ticket-arrives')
      assert.equal(typeof body.draft.description, 'string')
      const [only] = body.draft.phasesTemplate
      assert.deepEqual(Object.keys(only).sort(), ['agentId', 'autoAdvance', 'goal', 'id', 'instructions', 'operatorPool', 'phaseName'])
      assert.match(only.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      assert.equal(only.agentId, triageId)
      assert.deepEqual([only.autoAdvance, only.operatorPool], [false, ['maria']])
      assert.ok(only.phaseName.length <= 60)
      assert.deepEqual(body.changes, [{ op: 'add', phaseId: only.id, detail: `added "${only.phaseName}"` }])
      const again = (await draft({ mode: 'generate', prompt: 'When a ticket arrives, triage the ticket, then have @maria approve it.' })).json()
      assert.notEqual(again.draft.phasesTemplate[0].id, only.id, 'new ids every time')
    })

    it('does not store the draft', async () => {
      await draft({ mode: 'generate', prompt: 'Triage the ticket.' })
      assert.deepEqual((await send(app, 'GET', `/api/cycles/streams/${streamId}/cycles`)).json().data, [])
    })

    it('maps mode synonyms to their canonical mode and echoes it', async () => {
      for (const mode of ['generate', 'create', 'new']) {
        assert.equal((await draft({ mode, prompt: 'Triage the ticket.' })).json().mode, 'generate', mode)
      }
      for (const mode of ['refine', 'edit', 'update', 'revise', 'improve']) {
        const res = await draft({ mode, prompt: 'Rename Triage to Intake.', current: cycle() })
        assert.equal(res.statusCode, 200, mode)
        assert.equal(res.json().mode, 'refine')
        assert.equal(res.json().draft.phasesTemplate[0].phaseName, 'Intake')
      }
    })

    it('rejects any other mode with a 400 at /mode naming the accepted values', async () => {
      for (const mode of ['Generate', 'rewrite', '', 'REFINE']) {
        const res = await draft({ mode, prompt: 'x' })
        assert.equal(res.statusCode, 400, mode)
        assert.deepEqual(pointers(res), ['/mode'])
        assert.match(res.json().errors[0].detail, /generate, create, new, refine, edit, update, revise, improve/)
      }
    })

    it('refine without current is a 422', async () => {
      const res = await draft({ mode: 'refine', prompt: 'Rename Triage to Intake.' })
      assert.equal(res.statusCode, 422)
      assert.equal(res.json().type, 'urn:tandem:problem:unprocessable')
      assert.deepEqual(pointers(res), ['/current'])
    })

    it('an unknown stream, or one of another workspace, is a 404', async () => {
      assert.equal((await draft({ mode: 'generate', prompt: 'x' }, uuid(1))).statusCode, 404)
      const key = (await createKey(app, { workspace: 'other', name: 'o', role: 'admin' })).key
      const res = await send(app, 'POST', `/api/cycles/streams/${streamId}/cycles/draft`, { mode: 'generate', prompt: 'x' }, bearer(key))
      assert.equal(res.statusCode, 404)
    })

    it('assigns only agents of the stream\'s workspace', async () => {
      const key = (await createKey(app, { workspace: 'far', name: 'f', role: 'admin' })).headers
      const farStream = (await send(app, 'POST', '/api/streams', { name: 'far' }, key)).json().id
      const res = await send(app, 'POST', `/api/cycles/streams/${farStream}/cycles/draft`, { mode: 'generate', prompt: 'Have Triage Bot triage the ticket.' }, key)
      assert.equal(res.json().draft.phasesTemplate[0].agentId, NIL)
      assert.equal(res.json().warnings[0].code, 'no-agent')
    })

    it('mode and prompt are required strings; nothing else is allowed', async () => {
      assert.deepEqual(pointers(await draft({})), ['/mode', '/prompt'])
      assert.deepEqual(pointers(await draft({ mode: 'generate', prompt: 5 })), ['/prompt'])
      assert.deepEqual(pointers(await draft({ mode: 'generate', prompt: 'x', engine: 'claude' })), ['/engine'])
      assert.equal((await draft({ mode: 'generate', prompt: '' })).statusCode, 200)
    })

    it('prompt: at most 100000 characters', async () => {
      assert.equal((await draft({ mode: 'generate', prompt: 'Triage the ticket. '.repeat(5263).slice(0, 100000) })).statusCode, 200)
      const res = await draft({ mode: 'generate', prompt: 'x'.repeat(100001) })
      assert.equal(res.statusCode, 400)
      assert.deepEqual(pointers(res), ['/prompt'])
    })

    it('current: triggerName, description and phasesTemplate required; every phase field required and typed', async () => {
      assert.deepEqual(pointers(await draft({ mode: 'refine', prompt: 'x', current: {} })), ['/current/description', '/current/phasesTemplate', '/current/triggerName'])
      for (const field of ['id', 'agentId', 'goal', 'instructions', 'autoAdvance', 'phaseName', 'operatorPool']) {
        const broken = phase()
        delete (broken as Record<string, unknown>)[field]
        assert.deepEqual(pointers(await draft({ mode: 'refine', prompt: 'x', current: cycle([broken]) })), [`/current/phasesTemplate/0/${field}`], field)
      }
      const wrong: Array<[Record<string, unknown>, string]> = [
        [{ id: 'nope' }, 'id'],
        [{ agentId: '01890a5d-ac96-074b-bcce-b302099a8057' }, 'agentId'],
        [{ autoAdvance: 'true' }, 'autoAdvance'],
        [{ autoAdvance: 1 }, 'autoAdvance'],
        [{ goal: null }, 'goal'],
        [{ instructions: ['i'] }, 'instructions'],
        [{ phaseName: 7 }, 'phaseName'],
        [{ operatorPool: 'maria' }, 'operatorPool'],
        [{ operatorPool: [1] }, 'operatorPool/0'],
        [{ color: 'red' }, 'color'],
      ]
      for (const [override, pointer] of wrong) {
        assert.deepEqual(pointers(await draft({ mode: 'refine', prompt: 'x', current: cycle([phase(override)]) })), [`/current/phasesTemplate/0/${pointer}`], pointer)
      }
      assert.deepEqual(pointers(await draft({ mode: 'refine', prompt: 'x', current: { ...cycle(), extra: 1 } })), ['/current/extra'])
      assert.equal((await draft({ mode: 'refine', prompt: 'x', current: cycle([phase({ agentId: 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF' })]) })).statusCode, 200)
    })

    it('phasesTemplate: at most 100 phases; operatorPool: at most 100 entries', async () => {
      const many = (n: number) => Array.from({ length: n }, (_, i) => phase({ id: uuid(i + 1), phaseName: `P${i}` }))
      assert.equal((await draft({ mode: 'refine', prompt: 'Remove P0', current: cycle(many(100)) })).statusCode, 200)
      assert.deepEqual(pointers(await draft({ mode: 'refine', prompt: 'x', current: cycle(many(101)) })), ['/current/phasesTemplate'])
      const pool = (n: number) => Array.from({ length: n }, (_, i) => `op${i}`)
      assert.equal((await draft({ mode: 'refine', prompt: 'x', current: cycle([phase({ operatorPool: pool(100) })]) })).statusCode, 200)
      assert.deepEqual(pointers(await draft({ mode: 'refine', prompt: 'x', current: cycle([phase({ operatorPool: pool(101) })]) })), ['/current/phasesTemplate/0/operatorPool'])
    })

    it('refine keeps untouched phases exactly and reports changes and warnings', async () => {
      const current = cycle([phase({ id: uuid(1), phaseName: 'Triage' }), phase({ id: uuid(2), phaseName: 'Reply', agentId: triageId, autoAdvance: false, operatorPool: ['maria'] })])
      const res = (await draft({ mode: 'refine', prompt: 'Rename Triage to Intake. Remove the Escalation phase.', current })).json()
      assert.deepEqual(res.draft.phasesTemplate, [{ ...current.phasesTemplate[0], phaseName: 'Intake' }, current.phasesTemplate[1]])
      assert.deepEqual(res.changes, [{ op: 'update', phaseId: uuid(1), detail: 'renamed "Triage" to "Intake"' }])
      assert.equal(res.warnings[0].code, 'unknown-phase')
    })
  })
}
