// Input hardening: numbers in a body are stored exactly or refused, every free-form field has a
// bound (tested on both sides), and names are NFC without bidi controls or zero-width characters.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, pointers, send } from '../helpers.js'

const json = (app: FastifyInstance, method: 'POST' | 'PATCH', url: string, payload: string) =>
  app.inject({ method, url, payload, headers: { 'content-type': 'application/json' } })

const phase = (fields: Record<string, unknown> = {}) => ({
  id: '01890a5d-ac96-774b-bcce-b302099a8057',
  agentId: '00000000-0000-0000-0000-000000000000',
  goal: 'g',
  instructions: 'i',
  autoAdvance: true,
  phaseName: 'p',
  operatorPool: [],
  ...fields,
})
const paragraphs = (count: number, runsEach = 1) =>
  Array.from({ length: count }, () => ({ type: 'paragraph', children: Array.from({ length: runsEach }, () => ({ type: 'text', text: 'a' })) }))

for (const dialect of dialects()) {
  describe(`input hardening (${dialect})`, () => {
    let app: FastifyInstance
    let streamId: string
    const count = async (url: string) => (await send(app, 'GET', `${url}?limit=100`)).json().data.length
    before(async () => {
      app = await build(dialect, { TANDEM_AUTH: 'local' })
      streamId = (await send(app, 'POST', '/api/streams', { name: 'bounds' })).json().id
    })
    after(() => app.close())

    it('refuses numbers that would not be stored as sent, with a pointer at each', async () => {
      const before = await count('/api/agents')
      const res = await json(app, 'POST', '/api/agents', '{"name":"n","config":{"huge":1e400,"neg":-1e400,"big":12345678901234567890,"minus":-0,"tiny":1e-400,"list":[1,9007199254740993,-0.0],"a/b":{"x~":2e16}}}')
      assert.equal(res.statusCode, 400)
      assert.equal(res.json().type, 'urn:tandem:problem:validation-error')
      assert.deepEqual(pointers(res), ['/config/a~1b/x~0', '/config/big', '/config/huge', '/config/list/1', '/config/list/2', '/config/minus', '/config/neg', '/config/tiny'])
      assert.match(res.json().errors.find((e: { pointer: string }) => e.pointer === '/config/big').detail, /9007199254740991/)
      assert.equal(await count('/api/agents'), before, 'nothing was created')
      const id = (await send(app, 'POST', '/api/agents', { name: 'patched' })).json().id
      const patch = await json(app, 'PATCH', `/api/agents/${id}`, '{"config":{"n":[{"deep":1E+309}]}}')
      assert.deepEqual(pointers(patch), ['/config/n/0/deep'])
    })

    it('stores every number within the safe range exactly, on this database', async () => {
      const text = '{"name":"exact","config":{"max":9007199254740991,"min":-9007199254740991,"half":1.5,"small":1e-300,"tenth":0.1,"zero":0,"e":2.5e10,"s":"12345678901234567890 1e400 -0"}}'
      const res = await json(app, 'POST', '/api/agents', text)
      assert.equal(res.statusCode, 201)
      const stored = (await send(app, 'GET', `/api/agents/${res.json().id}`)).json().config
      assert.deepEqual(stored, { max: 9007199254740991, min: -9007199254740991, half: 1.5, small: 1e-300, tenth: 0.1, zero: 0, e: 2.5e10, s: '12345678901234567890 1e400 -0' })
    })

    it('bounds agent fields: tool names 128, templateId 256, config 64 KiB as JSON', async () => {
      const ok = await send(app, 'POST', '/api/agents', {
        name: 'bounded',
        templateId: 't'.repeat(256),
        capabilities: { tools: ['x'.repeat(128), '😀'.repeat(128)] },
        // {"k":"…"} is 8 bytes around the string: 65 528 bytes of text make exactly 65 536.
        config: { k: 'c'.repeat(65528) },
      })
      assert.equal(ok.statusCode, 201, ok.body)
      const tooMuch = await send(app, 'POST', '/api/agents', {
        name: 'unbounded',
        templateId: 't'.repeat(257),
        capabilities: { tools: ['ok', 'x'.repeat(129)] },
        config: { k: 'c'.repeat(65529) },
      })
      assert.equal(tooMuch.statusCode, 400)
      assert.deepEqual(pointers(tooMuch), ['/capabilities/tools/1', '/config', '/templateId'])
      assert.match(tooMuch.json().errors.find((e: { pointer: string }) => e.pointer === '/config').detail, /65536 bytes/)
      // Bytes, not characters: 32 764 two-byte characters are 65 528 bytes of text.
      assert.equal((await send(app, 'POST', '/api/agents', { name: 'bytes', config: { k: 'é'.repeat(32764) } })).statusCode, 201)
      assert.deepEqual(pointers(await send(app, 'POST', '/api/agents', { name: 'bytes', config: { k: 'é'.repeat(32765) } })), ['/config'])
      const id = ok.json().id
      assert.deepEqual(pointers(await send(app, 'PATCH', `/api/agents/${id}`, { templateId: 't'.repeat(257), config: { k: 'c'.repeat(65529) } })), ['/config', '/templateId'])
    })

    it('bounds cycle fields: triggerName and phaseName 200, goal 2000, instructions 20 000, description 5000', async () => {
      const url = `/api/cycles/streams/${streamId}/cycles`
      const atLimit = { triggerName: 't'.repeat(200), description: 'd'.repeat(5000), phasesTemplate: [phase({ phaseName: 'p'.repeat(200), goal: 'g'.repeat(2000), instructions: 'i'.repeat(20000) })] }
      assert.equal((await send(app, 'POST', url, atLimit)).statusCode, 201)
      const before = await count(url)
      const over = { triggerName: 't'.repeat(201), description: 'd'.repeat(5001), phasesTemplate: [phase({ phaseName: 'p'.repeat(201), goal: 'g'.repeat(2001), instructions: 'i'.repeat(20001) })] }
      const res = await send(app, 'POST', url, over)
      assert.equal(res.statusCode, 400)
      assert.deepEqual(pointers(res), ['/description', '/phasesTemplate/0/goal', '/phasesTemplate/0/instructions', '/phasesTemplate/0/phaseName', '/triggerName'])
      assert.equal(await count(url), before)
      const draft = await send(app, 'POST', `/api/cycles/streams/${streamId}/cycles/draft`, { mode: 'refine', prompt: 'Remove the first phase', current: over })
      assert.deepEqual(pointers(draft), ['/current/description', '/current/phasesTemplate/0/goal', '/current/phasesTemplate/0/instructions', '/current/phasesTemplate/0/phaseName', '/current/triggerName'])
    })

    it('bounds a message: 1000 paragraphs and 10 000 text runs in all', async () => {
      const url = `/api/chat/streams/${streamId}/messages`
      const message = (blocks: unknown[][]) => ({ content: { blocks: blocks.map((elements) => ({ type: 'rich_text', elements })) } })
      assert.equal((await send(app, 'POST', url, message([paragraphs(500), paragraphs(500)]))).statusCode, 201)
      assert.equal((await send(app, 'POST', url, message([paragraphs(1, 5000), paragraphs(1, 5000)]))).statusCode, 201)
      const before = await count(url)
      const tooManyParagraphs = await send(app, 'POST', url, message([paragraphs(500), paragraphs(501)]))
      assert.equal(tooManyParagraphs.statusCode, 400)
      assert.deepEqual(tooManyParagraphs.json().errors, [{ pointer: '/content', detail: 'must hold at most 1000 paragraphs in all blocks together (has 1001)' }])
      const tooManyRuns = await send(app, 'POST', url, message([paragraphs(1, 5000), paragraphs(1, 5001)]))
      assert.deepEqual(tooManyRuns.json().errors, [{ pointer: '/content', detail: 'must hold at most 10000 text runs in all blocks together (has 10001)' }])
      assert.deepEqual(pointers(await send(app, 'POST', url, message([paragraphs(1001)]))), ['/content/blocks/0/elements'])
      assert.equal(await count(url), before)
      const id = (await send(app, 'POST', url, message([paragraphs(1)]))).json().id
      assert.equal((await send(app, 'PATCH', `/api/chat/messages/${id}`, message([paragraphs(1, 5000), paragraphs(1, 5001)]))).statusCode, 400)
      assert.equal((await send(app, 'GET', `/api/chat/messages/${id}`)).json().revision, 1)
    })

    it('stores agent and stream names in NFC, normalised before the length is checked', async () => {
      const agent = await send(app, 'POST', '/api/agents', { name: 'Cafe\u0301' })
      assert.equal(agent.json().name, 'Caf\u00e9')
      const long = await send(app, 'POST', '/api/agents', { name: 'e\u0301'.repeat(120) })
      assert.equal(long.statusCode, 201, '240 code points, 120 once composed')
      assert.equal(long.json().name, '\u00e9'.repeat(120))
      const patched = await send(app, 'PATCH', `/api/agents/${agent.json().id}`, { name: 'A\u030angstr\u00f6m' })
      assert.equal(patched.json().name, '\u00c5ngstr\u00f6m')
      const stream = await send(app, 'POST', '/api/streams', { name: 'Re\u0301sume\u0301' })
      assert.equal(stream.json().name, 'R\u00e9sum\u00e9')
      assert.equal((await send(app, 'GET', `/api/streams/${stream.json().id}`)).json().name, 'R\u00e9sum\u00e9')
    })

    it('refuses bidi controls and zero-width characters in names, and changes nothing', async () => {
      const invisible = ['\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069', '\u200e', '\u200f', '\u061c', '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff']
      const agents = await count('/api/agents')
      const streams = await count('/api/streams')
      const id = (await send(app, 'POST', '/api/agents', { name: 'plain' })).json().id
      for (const character of invisible) {
        const name = `pay${character}pal`
        for (const res of [await send(app, 'POST', '/api/agents', { name }), await send(app, 'PATCH', `/api/agents/${id}`, { name }), await send(app, 'POST', '/api/streams', { name })]) {
          assert.equal(res.statusCode, 400, JSON.stringify(name))
          assert.deepEqual(pointers(res), ['/name'])
          assert.match(res.json().errors[0].detail, /bidi controls or zero-width/)
        }
      }
      assert.equal(await count('/api/agents'), agents + 1)
      assert.equal(await count('/api/streams'), streams)
      assert.equal((await send(app, 'GET', `/api/agents/${id}`)).json().name, 'plain')
      // Other scripts and emoji without joiners are names like any other.
      for (const name of ['مساعد', 'עוזר', 'Ассистент', '助手 😀']) assert.equal((await send(app, 'POST', '/api/streams', { name })).statusCode, 201, name)
    })
  })
}
