// Fuzzing every route: bodies built from the route schemas, then mutated (wrong types, missing and unknown
// fields, boundary lengths, astral characters, __proto__ / constructor keys — inside `config` too —,
// truncated JSON, duplicate keys, invalid UTF-8, random bytes, numbers JSON.parse would change, bidi and
// zero-width characters, 40 000-character white-space runs, foreign Host and proxy headers, undecodable
// URLs), plus fixed hostile payloads (100 000 levels of nesting, 2 MiB strings, 10 001 runs). Every answer is a 2xx or a well-formed 4xx problem: never a 5xx, never a
// crash, never a polluted prototype; unmutated valid bodies are accepted. FUZZ_RUNS sets the request count.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import MarkdownIt from 'markdown-it'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { build, dialects, send } from './helpers.js'
import { problemWordingFaults } from './wording.js'

const RUNS = Number(process.env.FUZZ_RUNS ?? 20000)
const SEED = Number(process.env.FUZZ_SEED ?? 20261121)
const UUID = fc.uuid({ version: [1, 4, 7] })
const text = (maxLength: number) => fc.oneof(fc.string({ maxLength }), fc.string({ unit: 'binary', maxLength }))
const safeKey = fc.string({ maxLength: 12 }).filter((k) => !['__proto__', 'constructor', 'prototype'].includes(k))

const agentBody = fc.record(
  {
    name: fc.string({ unit: 'binary', minLength: 1, maxLength: 120 }),
    providerType: fc.constantFrom('custom_webhook', 'custom_token_only', 'claude', 'mistral', 'elevenlabs', 'copilot_studio', 'cursor'),
    authMode: fc.constantFrom('api_key', 'direct_line', 'none'),
    avatarAssetId: UUID,
    credentialId: fc.constantFrom('00000000-0000-0000-0000-000000000000', 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF'),
    config: fc.dictionary(safeKey, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 }),
    instructions: text(300),
    templateId: text(40),
    capabilities: fc.record({ streaming: fc.boolean(), tools: fc.array(fc.string({ maxLength: 20 }), { maxLength: 50 }) }, { requiredKeys: [] }),
    endpointUrl: fc.constantFrom('https://example.com/hook', 'http://127.0.0.1:8080/a?b=c', 'HTTPS://EXAMPLE.ORG'),
  },
  { requiredKeys: ['name'] },
)
const run = fc.record({ type: fc.constant('text'), text: text(50), style: fc.record({ bold: fc.boolean(), italic: fc.boolean(), strikethrough: fc.boolean(), code: fc.boolean() }, { requiredKeys: [] }) }, { requiredKeys: ['type', 'text'] })
const paragraph = fc.record({ type: fc.constant('paragraph'), direction: fc.constantFrom('ltr', 'rtl'), children: fc.array(run, { maxLength: 4 }) }, { requiredKeys: ['type', 'children'] })
const messageBody = fc.record({ content: fc.record({ blocks: fc.array(fc.record({ type: fc.constant('rich_text'), elements: fc.array(paragraph, { maxLength: 3 }) }), { minLength: 1, maxLength: 4 }) }) })
const phase = fc.record({
  id: UUID,
  agentId: fc.constant('00000000-0000-0000-0000-000000000000'),
  goal: text(40),
  instructions: text(80),
  autoAdvance: fc.boolean(),
  phaseName: text(30),
  operatorPool: fc.array(fc.string({ maxLength: 10 }), { maxLength: 4 }),
})
const cycleBody = fc.record({ triggerName: text(30), description: text(60), phasesTemplate: fc.uniqueArray(phase, { maxLength: 5, selector: (p) => p.id.toLowerCase() }) })
const credentialBody = fc.record({ name: fc.string({ unit: 'binary', minLength: 1, maxLength: 120 }), secret: fc.string({ unit: 'binary', minLength: 1, maxLength: 300 }) })
const credentialPatch = fc.record({ name: fc.string({ unit: 'binary', minLength: 1, maxLength: 120 }), secret: fc.string({ unit: 'binary', minLength: 1, maxLength: 300 }) }, { requiredKeys: ['name'] })
const startBody = fc.record({ input: fc.dictionary(safeKey, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 }) }, { requiredKeys: [] })
const decisionBody = fc.record({ decision: fc.constantFrom('approve', 'revise', 'reject'), note: fc.string({ minLength: 1, maxLength: 200 }) }, { requiredKeys: ['decision'] })
const resultBody = fc.oneof(fc.record({ output: fc.record({ text: fc.string({ minLength: 1, maxLength: 200 }) }) }), fc.record({ error: fc.record({ detail: fc.string({ minLength: 1, maxLength: 200 }) }) }))
const claimBody = fc.record({ waitSeconds: fc.constant(0) }, { requiredKeys: [] })
const draftBody = fc.record({ mode: fc.constantFrom('generate', 'create', 'new'), prompt: text(400) })

type Json = unknown

const INVISIBLE = /[\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]/g

/**
 * A generated body made valid where the generators cannot say it: no U+0000 (PostgreSQL cannot store it),
 * numbers within ±(2^53 − 1) (others are refused: they would not be stored exactly), and names without
 * invisible characters and at most 120 characters once in NFC.
 */
function valid(value: Json, key = ''): Json {
  if (typeof value === 'string') {
    const text = value.replaceAll('\u0000', ' ')
    if (key !== 'name') return text
    return [...text.replace(INVISIBLE, '').normalize('NFC')].slice(0, 120).join('') || 'n'
  }
  if (typeof value === 'number') return Math.abs(value) > Number.MAX_SAFE_INTEGER ? Math.sign(value) : value
  if (Array.isArray(value)) return value.map((item) => valid(item))
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.replaceAll('\u0000', ' '), valid(v, k)]))
  return value
}
interface Target {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE'
  url: string
  body?: fc.Arbitrary<Json>
  /** A valid request may still be refused here (a decision made once, a result without the task's token). */
  refusesValid?: boolean
}

// Mutations of a JSON value at a position chosen by `at` (a walk over the tree).
const MUTATIONS = ['replace', 'delete', 'add', 'retype', 'empty', 'proto', 'huge', 'astral', 'invisible', 'whitespace'] as const
const mutation = fc.record({ op: fc.constantFrom(...MUTATIONS), at: fc.nat(), value: fc.jsonValue({ maxDepth: 2 }), key: fc.oneof(safeKey, fc.constantFrom('__proto__', 'constructor', 'prototype', 'extra')) })

function containers(value: Json, found: Array<Record<string, Json> | Json[]> = []): Array<Record<string, Json> | Json[]> {
  if (value !== null && typeof value === 'object') {
    found.push(value as Record<string, Json>)
    for (const child of Object.values(value)) containers(child, found)
  }
  return found
}

function mutate(body: Json, plan: { op: (typeof MUTATIONS)[number]; at: number; value: Json; key: string }): Json {
  const copy = structuredClone(body)
  const places = containers(copy)
  const target = places[plan.at % places.length] as Record<string, Json>
  const keys = Object.keys(target)
  const key = keys[plan.at % Math.max(keys.length, 1)]
  switch (plan.op) {
    case 'replace':
      if (key !== undefined) target[key] = plan.value
      break
    case 'delete':
      if (key !== undefined) delete target[key]
      break
    case 'add':
      target[plan.key] = plan.value
      break
    case 'retype':
      if (key !== undefined) target[key] = typeof target[key] === 'string' ? 42 : typeof target[key] === 'number' ? String(target[key]) : typeof target[key] === 'boolean' ? 'true' : [target[key]]
      break
    case 'empty': // the lower bounds of 1 (a character, an item, a property): their problems must say so in the singular
      if (key !== undefined) target[key] = typeof target[key] === 'string' ? '' : Array.isArray(target[key]) ? [] : typeof target[key] === 'object' && target[key] !== null ? {} : target[key]
      break
    case 'proto':
      return JSON.stringify(copy).replace(/^\{/, `{${JSON.stringify(plan.key)}:${JSON.stringify({ polluted: true })},`)
    case 'huge':
      if (key !== undefined) target[key] = 'x'.repeat(20000 + (plan.at % 50000))
      break
    case 'astral':
      if (key !== undefined) target[key] = '😀'.repeat(1 + (plan.at % 130))
      break
    case 'invisible':
      if (key !== undefined) target[key] = `pay${'\u202e\u200b\u2066\ufeff\u200d'.charAt(plan.at % 5)}pal`
      break
    case 'whitespace':
      if (key !== undefined) target[key] = `a${'\t\n\r \u00a0\u2028\u3000\ufeff'.charAt(plan.at % 8).repeat(39998)}b`
      break
  }
  return copy
}

// The bytes of a request: usually the JSON of the body, sometimes damaged.
const RAW = ['json', 'json', 'json', 'truncated', 'duplicate', 'bytes', 'badUtf8', 'protoText', 'inexactNumber'] as const
const INEXACT_NUMBERS = ['1e400', '-1e400', '12345678901234567890', '-0', '-0.0e5', '1e-400', '9007199254740993', '[1,2e16]']
const encoding = fc.record({ how: fc.constantFrom(...RAW), at: fc.nat(), bytes: fc.uint8Array({ maxLength: 64 }) })

function encode(body: Json, plan: { how: (typeof RAW)[number]; at: number; bytes: Uint8Array }, raw = false): Buffer | string {
  const json = raw ? (body as string) : (JSON.stringify(body) ?? 'null')
  switch (plan.how) {
    case 'truncated':
      return json.slice(0, plan.at % Math.max(json.length, 1))
    case 'duplicate':
      return json.replace(/^\{/, '{"name":"dup","name":"dup2",')
    case 'bytes':
      return Buffer.from(plan.bytes)
    case 'badUtf8':
      return Buffer.concat([Buffer.from(json.slice(0, 1 + (plan.at % json.length))), Buffer.from([0xc3, 0x28, 0xff, 0xfe]), Buffer.from(json.slice(1 + (plan.at % json.length)))])
    case 'protoText':
      return json.replace(/^\{/, '{"constructor":{"prototype":{"polluted":true}},')
    case 'inexactNumber':
      return json.replace(/^\{/, `{"config":{"n":${INEXACT_NUMBERS[plan.at % INEXACT_NUMBERS.length]}},`)
    default:
      return json
  }
}

function assertWellFormed(response: LightMyRequestResponse, context: string): void {
  assert.ok(response.statusCode < 500, `${context} → ${response.statusCode} ${response.body.slice(0, 300)}`)
  if (response.statusCode >= 400) {
    assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8', context)
    const problem = response.json()
    assert.equal(problem.status, response.statusCode, context)
    for (const field of ['type', 'title', 'detail']) assert.equal(typeof problem[field], 'string', `${context}: ${field}`)
    for (const error of problem.errors ?? []) assert.ok(typeof error.pointer === 'string' && typeof error.detail === 'string', context)
    assert.deepEqual(problemWordingFaults(problem), [], context)
  }
}

function assertNoPollution(): void {
  assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).filter((name) => name === 'polluted'), [])
  assert.equal(({} as Record<string, unknown>).polluted, undefined)
}

for (const dialect of dialects()) {
  describe(`fuzzing every route (${dialect})`, () => {
    let app: FastifyInstance
    let targets: Target[]
    const runs = dialect === 'sqlite' ? RUNS : Math.ceil(RUNS / 10)
    before(async () => {
      app = await build(dialect)
      const streamId = (await send(app, 'POST', '/api/streams', { name: 'fuzz' })).json().id
      const agentId = (await send(app, 'POST', '/api/agents', { name: 'Fuzz target' })).json().id
      const credentialId = (await send(app, 'POST', '/api/credentials', { name: 'Fuzz secret', secret: 'fuzz-secret-value' })).json().id
      const messageId = (await send(app, 'POST', `/api/chat/streams/${streamId}/messages`, { content: { blocks: [{ type: 'rich_text', elements: [] }] } })).json().id
      const people = { id: '01890a5d-ac96-774b-bcce-b302099a8057', agentId: '00000000-0000-0000-0000-000000000000', goal: 'g', instructions: 'i', autoAdvance: false, phaseName: 'p', operatorPool: [] }
      const cycleId = (await send(app, 'POST', `/api/cycles/streams/${streamId}/cycles`, { triggerName: 'fuzz', description: 'd', phasesTemplate: [people] })).json().id
      const run = (await send(app, 'POST', `/api/cycles/streams/${streamId}/cycles/${cycleId}/runs`, {})).json()
      targets = [
        { method: 'POST', url: '/api/agents', body: agentBody },
        { method: 'PATCH', url: `/api/agents/${agentId}`, body: agentBody },
        { method: 'GET', url: '/api/agents?limit=5' },
        { method: 'GET', url: `/api/agents/${agentId}` },
        { method: 'POST', url: '/api/streams', body: fc.record({ name: fc.string({ minLength: 1, maxLength: 120 }), description: text(100) }, { requiredKeys: ['name'] }) },
        { method: 'GET', url: `/api/streams/${streamId}` },
        { method: 'POST', url: `/api/chat/streams/${streamId}/messages`, body: messageBody },
        { method: 'GET', url: `/api/chat/streams/${streamId}/messages?limit=3` },
        { method: 'PATCH', url: `/api/chat/messages/${messageId}`, body: messageBody },
        { method: 'GET', url: `/api/chat/messages/${messageId}/revisions?limit=2` },
        { method: 'GET', url: `/api/chat/messages/${messageId}/render?format=html` },
        { method: 'GET', url: `/api/chat/messages/${messageId}/render?format=markdown` },
        { method: 'POST', url: `/api/cycles/streams/${streamId}/cycles/draft`, body: draftBody },
        { method: 'POST', url: `/api/cycles/streams/${streamId}/cycles`, body: cycleBody },
        { method: 'GET', url: `/api/cycles/streams/${streamId}/cycles` },
        { method: 'POST', url: '/api/credentials', body: credentialBody },
        { method: 'PATCH', url: `/api/credentials/${credentialId}`, body: credentialPatch },
        { method: 'GET', url: '/api/credentials?limit=5' },
        { method: 'GET', url: `/api/credentials/${credentialId}` },
        { method: 'GET', url: '/api/me' },
        { method: 'POST', url: `/api/cycles/streams/${streamId}/cycles/${cycleId}/runs`, body: startBody },
        { method: 'POST', url: `/api/streams/${streamId}/triggers/other-trigger`, body: startBody },
        { method: 'GET', url: `/api/cycles/streams/${streamId}/runs?limit=3&status=waiting` },
        { method: 'GET', url: `/api/runs/${run.id}` },
        { method: 'POST', url: `/api/runs/${run.id}/phases/${run.phases[0].id}/decision`, body: decisionBody, refusesValid: true },
        { method: 'POST', url: `/api/runs/${run.id}/cancel`, refusesValid: true },
        { method: 'POST', url: `/api/tasks/${run.id}/result`, body: resultBody, refusesValid: true },
        { method: 'POST', url: '/api/tasks/claim', body: claimBody, refusesValid: true },
      ]
    })
    after(() => app.close())

    it(`answers ${runs} generated and mutated requests with 2xx or a well-formed 4xx`, { timeout: 600000 }, async () => {
      const counts = { requests: 0, accepted: 0, rejected: 0 }
      const request = fc.record({
        target: fc.nat(),
        valid: fc.boolean(),
        mutation,
        encoding,
        contentType: fc.constantFrom('application/json', 'application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded'),
        pathNoise: fc.constantFrom('', '', '', 'x', '%00', '/..', '?limit=0', '?cursor=%ff', '?format=pdf', '?limit=1e9', '/%E0%A4%A', '%'),
        // Local mode: a foreign Host (DNS rebinding) or a proxy's header is refused whatever the rest.
        headerNoise: fc.constantFrom<Record<string, string>>({}, {}, {}, { host: 'evil.example' }, { host: '127.0.0.1.nip.io:3000' }, { 'x-forwarded-for': '127.0.0.1' }, { forwarded: 'for=127.0.0.1' }, { via: '1.1 nginx' }, { 'x-real-ip': '::1' }),
      })
      await fc.assert(
        fc.asyncProperty(request, fc.gen(), async (plan, gen) => {
          const target = targets[plan.target % targets.length] as Target
          let url = target.url
          let payload: Buffer | string | undefined
          let body: Json
          if (target.body) {
            body = valid(gen(() => target.body as fc.Arbitrary<Json>))
            const mutated = plan.valid ? body : mutate(body, plan.mutation)
            payload = plan.valid ? JSON.stringify(body) : encode(mutated, plan.encoding, plan.mutation.op === 'proto')
          }
          if (!plan.valid) url += plan.pathNoise
          const headers = { ...(payload === undefined ? {} : { 'content-type': plan.valid ? 'application/json' : plan.contentType }), ...(plan.valid ? {} : plan.headerNoise) }
          const response = await app.inject({ method: target.method, url, payload, headers })
          counts.requests++
          const context = `${target.method} ${url} ${String(payload).slice(0, 200)}`
          assertWellFormed(response, context)
          assertNoPollution()
          if (plan.valid && !target.refusesValid) {
            assert.ok(response.statusCode < 300, `valid input refused: ${context} → ${response.statusCode} ${response.body.slice(0, 300)}`)
            counts.accepted++
          } else if (response.statusCode >= 400) counts.rejected++
        }),
        { numRuns: runs, seed: SEED, endOnFailure: true },
      )
      console.log(`fuzz (${dialect}): ${counts.requests} requests, ${counts.accepted} valid accepted, ${counts.rejected} rejected with 4xx, 0 5xx, 0 crashes, prototype clean`)
      assert.equal(counts.requests, runs)
    })

    it('survives fixed hostile payloads', async () => {
      const hostile: Array<[string, string | Buffer]> = [
        ['100 000 nested arrays', '['.repeat(100000) + ']'.repeat(100000)],
        ['100 000 nested objects in config', `{"name":"deep","config":${'{"a":'.repeat(100000)}1${'}'.repeat(100000)}}`],
        ['2 MiB string', JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) })],
        ['nested proto', '{"name":"p","config":{"a":{"__proto__":{"polluted":true}}}}'],
        ['constructor prototype', '{"name":"p","config":{"constructor":{"prototype":{"polluted":true}}}}'],
        ['lone surrogate', '{"name":"\\ud800"}'],
        ['NUL bytes', '{"name":"a\\u0000b"}'],
        ['empty', ''],
        ['whitespace', '   '],
        ['BOM', '\ufeff{"name":"bom"}'],
        ['numbers', '{"name":"n","config":{"big":1e400,"neg":-0}}'],
        ['many numbers', `{"name":"n","config":{"a":[${Array(50000).fill('1e-400').join(',')}]}}`],
        ['10 001 runs', JSON.stringify({ content: { blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: Array(10001).fill({ type: 'text', text: '' }) }] }] } })],
        ['1001 paragraphs', JSON.stringify({ content: { blocks: [{ type: 'rich_text', elements: Array(1001).fill({ type: 'paragraph', children: [] }) }] } })],
      ]
      for (const [label, payload] of hostile) {
        for (const url of ['/api/agents', `/api/chat/messages/${'01890a5d-ac96-774b-bcce-b302099a8057'}`]) {
          const response = await app.inject({ method: url.includes('chat') ? 'PATCH' : 'POST', url, payload, headers: { 'content-type': 'application/json' } })
          assertWellFormed(response, `${label} → ${url}`)
          assertNoPollution()
        }
      }
      assert.equal((await send(app, 'GET', '/healthz')).statusCode, 200, 'still alive')
    })

    it('renders stored hostile messages (long white space, empty runs between code runs) in every format', async () => {
      const streamId = (await send(app, 'POST', '/api/streams', { name: 'hostile renders' })).json().id
      const spaces = ['\t', '\n', '\r', ' ', '\u00a0', '\u2028', '\u3000', '\ufeff', '\v', '\f']
      const runs = [
        ...spaces.map((space) => ({ type: 'text', text: `a${space.repeat(3990)}b`, style: { bold: true } })),
        { type: 'text', text: 'x`', style: { code: true } },
        { type: 'text', text: '', style: { italic: true } },
        { type: 'text', text: '<img src=x onerror=alert(1)>', style: { code: true } },
      ]
      const created = await send(app, 'POST', `/api/chat/streams/${streamId}/messages`, { content: { blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: runs }] }] } })
      assert.equal(created.statusCode, 201, created.body)
      for (const format of ['html', 'markdown', 'text']) {
        const rendered = await send(app, 'GET', `/api/chat/messages/${created.json().id}/render?format=${format}`)
        assertWellFormed(rendered, format)
        assert.equal(rendered.statusCode, 200)
        if (format === 'markdown') assert.doesNotMatch(new MarkdownIt({ html: true }).render(rendered.body), /<img/)
      }
    })
  })
}
