// The model-backed engine through the real AI SDK clients, against a local server that speaks each
// provider's API: answers are repaired (unknown agents → nil, kept ids kept), or rejected as 502 / 504.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig, parseDrafter, type DrafterConfig } from '../../src/config.js'
import { AGENTS_BUDGET, createModelDrafter } from '../../src/drafter/model.js'
import { TEST_SECRET_KEY, freshDatabase, send } from '../helpers.js'
import { startFakeModelServer, type FakeModelServer } from '../fakes/model-server.js'

const NIL = '00000000-0000-0000-0000-000000000000'
const KEPT = '01890a5d-ac96-774b-bcce-000000000001'
const OTHER = '01890a5d-ac96-774b-bcce-000000000002'

async function appWith(drafter: Exclude<DrafterConfig, { kind: 'builtin' }>, env: Record<string, string>, timeoutMs = 5000) {
  const database = await freshDatabase('sqlite')
  const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', TANDEM_SECRET_KEY: TEST_SECRET_KEY, DATABASE_URL: database.url }), { drafter: createModelDrafter(drafter, { timeoutMs, env }) })
  app.addHook('onClose', () => database.drop())
  return app
}

const providers = (server: FakeModelServer): Array<{ label: string; config: DrafterConfig; env: Record<string, string>; path: string; auth: (h: Record<string, unknown>) => boolean }> => [
  { label: 'Anthropic', config: parseDrafter('anthropic:claude-test'), env: { ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_BASE_URL: `${server.url}/v1` }, path: '/v1/messages', auth: (h: Record<string, unknown>) => h['x-api-key'] === 'sk-ant-test' },
  { label: 'OpenAI-compatible', config: parseDrafter(`openai-compatible:${server.url}/v1#local-model`), env: { OPENAI_COMPATIBLE_API_KEY: 'sk-local' }, path: '/v1/chat/completions', auth: (h: Record<string, unknown>) => h.authorization === 'Bearer sk-local' },
  { label: 'Mistral', config: parseDrafter('mistral:mistral-test'), env: { MISTRAL_API_KEY: 'mk-test', MISTRAL_BASE_URL: `${server.url}/v1` }, path: '/v1/chat/completions', auth: (h: Record<string, unknown>) => h.authorization === 'Bearer mk-test' },
]

describe('model-backed drafter', () => {
  let server: FakeModelServer
  before(async () => {
    server = await startFakeModelServer()
  })
  after(() => server.close())

  for (const provider of ['Anthropic', 'OpenAI-compatible', 'Mistral']) {
    describe(provider, () => {
      let app: FastifyInstance
      let streamId: string
      let agentId: string
      before(async () => {
        const p = providers(server).find((x) => x.label === provider)!
        app = await appWith(p.config as Exclude<DrafterConfig, { kind: 'builtin' }>, p.env, 800)
        streamId = (await send(app, 'POST', '/api/streams', { name: 'model' })).json().id
        agentId = (await send(app, 'POST', '/api/agents', { name: 'Triage Bot', instructions: 'Classify tickets.' })).json().id
      })
      after(() => app.close())

      const draft = (body: unknown) => send(app, 'POST', `/api/cycles/streams/${streamId}/cycles/draft`, body)

      it('drafts through the provider API, with the workspace agents in the request, and repairs unknown agents', async () => {
        const p = providers(server).find((x) => x.label === provider)!
        server.requests.length = 0
        server.script({
          answer: {
            triggerName: 'ticket-arrives',
            description: 'Handle a ticket.',
            phasesTemplate: [
              { id: null, agentId, phaseName: 'Triage', goal: 'Ticket triaged', instructions: 'Triage it.', autoAdvance: true, operatorPool: [] },
              { id: null, agentId: '01890a5d-ac96-774b-bcce-00000000beef', phaseName: 'Reply', goal: 'Replied', instructions: 'Reply.', autoAdvance: false, operatorPool: ['@maria'] },
            ],
          },
        })
        const res = await draft({ mode: 'generate', prompt: 'When a ticket arrives, triage it, then reply.' })
        assert.equal(res.statusCode, 200, res.body)
        const body = res.json()
        assert.equal(body.engine, `${p.config.kind}:${(p.config as { model: string }).model}`)
        const [triage, reply] = body.draft.phasesTemplate
        assert.equal(triage.agentId, agentId)
        assert.equal(reply.agentId, NIL)
        assert.deepEqual(reply.operatorPool, ['maria'])
        assert.match(triage.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7/)
        assert.ok(body.warnings.some((w: { code: string; phaseId: string }) => w.code === 'unknown-agent' && w.phaseId === reply.id))
        assert.deepEqual(body.changes.map((c: { op: string }) => c.op), ['add', 'add'])
        const [request] = server.requests
        assert.equal(request?.path, p.path)
        assert.ok(p.auth(request!.headers), 'the API key is sent')
        assert.ok(JSON.stringify(request!.body).includes(agentId), 'the workspace agents are in the prompt')
      })

      it('keeps the ids and fields of phases the model keeps in refine mode', async () => {
        const current = {
          triggerName: 't',
          description: 'd',
          phasesTemplate: [
            { id: KEPT, agentId, phaseName: 'Triage', goal: 'g', instructions: 'i', autoAdvance: true, operatorPool: [] },
            { id: OTHER, agentId: NIL, phaseName: 'Reply', goal: 'g', instructions: 'i', autoAdvance: true, operatorPool: [] },
          ],
        }
        server.script({
          answer: {
            triggerName: 't',
            description: 'd',
            phasesTemplate: [
              { ...current.phasesTemplate[0] },
              { ...current.phasesTemplate[1], id: null, phaseName: 'Reply', autoAdvance: false, operatorPool: ['li'] },
              { id: KEPT, agentId, phaseName: 'Survey', goal: 'g', instructions: 'Send a survey.', autoAdvance: true, operatorPool: [] },
            ],
          },
        })
        const res = await draft({ mode: 'refine', prompt: 'Reply waits for @li; add a survey at the end.', current })
        assert.equal(res.statusCode, 200, res.body)
        const [triage, reply, survey] = res.json().draft.phasesTemplate
        assert.deepEqual(triage, current.phasesTemplate[0], 'untouched phase identical')
        assert.equal(reply.id, OTHER, 'a phase kept by name keeps its id')
        assert.deepEqual([reply.autoAdvance, reply.operatorPool], [false, ['li']])
        assert.notEqual(survey.id, KEPT, 'a repeated id is replaced')
        assert.deepEqual(res.json().changes.map((c: { op: string; phaseId: string }) => [c.op, c.phaseId]), [['update', OTHER], ['add', survey.id]])
      })

      it('cuts an answer with overlong fields to the cycle bounds, so the draft can be saved as it is', async () => {
        server.script({
          answer: {
            triggerName: 't'.repeat(500),
            description: 'd'.repeat(6000),
            phasesTemplate: [{ id: null, agentId, phaseName: 'p'.repeat(300), goal: 'g'.repeat(3000), instructions: '😀'.repeat(25000), autoAdvance: true, operatorPool: [] }],
          },
        })
        const res = await draft({ mode: 'generate', prompt: 'Do it.' })
        assert.equal(res.statusCode, 200, res.body.slice(0, 300))
        const cycle = res.json().draft
        assert.equal([...cycle.triggerName].length, 200)
        assert.equal([...cycle.description].length, 5000)
        const [phase] = cycle.phasesTemplate
        assert.deepEqual([[...phase.phaseName].length, [...phase.goal].length, [...phase.instructions].length], [200, 2000, 20000])
        assert.ok(phase.instructions.endsWith('😀…'), 'cut between characters, never inside a surrogate pair')
        assert.equal((await send(app, 'POST', `/api/cycles/streams/${streamId}/cycles`, cycle)).statusCode, 201)
      })

      it('sends the model a bounded amount of agent data, however large the agents are', async () => {
        // As large as the agent schema allows: 50 tools of 128 characters, 19 200 characters of instructions.
        const huge = Array.from({ length: 50 }, (_, i) => `tool_${i}_`.padEnd(128, 'x'))
        for (let i = 0; i < 5; i++) {
          const res = await send(app, 'POST', '/api/agents', { name: `Bulky Triage ${i}`, instructions: 'Triage tickets. '.repeat(1200), capabilities: { tools: huge } })
          assert.equal(res.statusCode, 201, res.body)
        }
        server.requests.length = 0
        server.script({ answer: { triggerName: 'manual', description: 'd', phasesTemplate: [] } })
        const res = await draft({ mode: 'generate', prompt: 'Triage the ticket.' })
        assert.equal(res.statusCode, 200, res.body)
        const sent = JSON.stringify(server.requests[0]!.body).length
        assert.ok(sent < AGENTS_BUDGET + 20000, `sent ${sent} characters`)
        assert.ok(JSON.stringify(server.requests[0]!.body).includes('Bulky Triage 0'), 'the best candidates are still listed')
      })

      it('answers 502 when the model does not answer with JSON', async () => {
        server.script({ answer: 'I would love to help! Here is a plan: first triage...' })
        const res = await draft({ mode: 'generate', prompt: 'Triage it.' })
        assert.equal(res.statusCode, 502)
        assert.equal(res.json().type, 'urn:tandem:problem:bad-gateway')
      })

      it('answers 502 when the answer cannot be repaired into a cycle', async () => {
        server.script({ answer: { triggerName: 'x', description: 'y', steps: ['triage'] } })
        const res = await draft({ mode: 'generate', prompt: 'Triage it.' })
        assert.equal(res.statusCode, 502)
        assert.match(res.json().detail, /phasesTemplate/)
      })

      it('answers 502 when the provider fails', async () => {
        server.script({ answer: {}, status: 500 })
        const res = await draft({ mode: 'generate', prompt: 'Triage it.' })
        assert.equal(res.statusCode, 502)
        assert.match(res.json().detail, /status 500/)
      })

      it('answers 504 when the model is slower than the time-out', async () => {
        server.script({ answer: { triggerName: 'x', description: 'y', phasesTemplate: [] }, delayMs: 3000 })
        const res = await draft({ mode: 'generate', prompt: 'Triage it.' })
        assert.equal(res.statusCode, 504)
        assert.equal(res.json().type, 'urn:tandem:problem:gateway-timeout')
      })
    })
  }
})
