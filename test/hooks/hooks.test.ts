// Inbound hooks: created by admins with a whsec_ secret shown once; a signed call starts the runs (trigger
// kind hook); a wrong, stale, unsigned or replayed call starts nothing; 64 KiB at the bound and one past it;
// a flood on one hook does not stop another; nothing else answers under /hooks; rekey re-seals the secret.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes, randomUUID } from 'node:crypto'
import { Readable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { Webhook } from 'standardwebhooks'
import { build, dialects, send } from '../helpers.js'
import { Vault } from '../../src/credentials/vault.js'
import { INBOUND_HOOK_SECRETS, reseal } from '../../src/credentials/rekey.js'
import { keyFor, runsOf, waitingStream } from '../schedules/setup.js'

function signed(secret: string, body: string, options: { id?: string; at?: Date } = {}) {
  const id = options.id ?? `msg_${randomUUID()}`
  const at = options.at ?? new Date()
  return { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign(id, at, body) }
}

for (const dialect of dialects()) {
  describe(`inbound hooks (${dialect})`, () => {
    let app: FastifyInstance
    before(async () => {
      app = await build(dialect, { TANDEM_HOOK_RATE_LIMIT: '8/minute' })
    })
    after(async () => app.close())

    async function createHook(triggerName: string) {
      const { streamId } = await waitingStream(app, triggerName)
      const res = await send(app, 'POST', `/api/streams/${streamId}/hooks`, { triggerName })
      assert.equal(res.statusCode, 201, res.body)
      return { streamId, ...(res.json() as { id: string; url: string; secret: string }) }
    }
    const call = (id: string, body: string, headers: Record<string, string>) => app.inject({ method: 'POST', url: `/hooks/${id}`, payload: body, headers })

    it('is created by admins only, with a secret shown this once', async () => {
      const { streamId } = await waitingStream(app, 'admins')
      const member = await keyFor(app, 'mia', 'member')
      assert.equal((await send(app, 'POST', `/api/streams/${streamId}/hooks`, { triggerName: 'admins' }, member)).statusCode, 403)
      const hook = await createHook('shown-once')
      assert.match(hook.secret, /^whsec_[A-Za-z0-9+/=]{32}$/)
      assert.ok(hook.url.endsWith(`/hooks/${hook.id}`))
      const list = await send(app, 'GET', `/api/streams/${hook.streamId}/hooks`)
      assert.equal(list.json().data.length, 1)
      assert.ok(!list.body.includes(hook.secret.slice(6)), 'no secret in the list')
      const row = await app.database.db.selectFrom('inbound_hooks').selectAll().where('id', '=', hook.id).executeTakeFirstOrThrow()
      assert.ok(!JSON.stringify(row).includes(hook.secret.slice(6)), 'sealed at rest')
    })

    it('a signed call starts the runs with the body as input; a replay answers the same and starts nothing', async () => {
      const hook = await createHook('signed')
      const body = JSON.stringify({ order: 42 })
      const headers = signed(hook.secret, body)
      const first = await call(hook.id, body, headers)
      assert.equal(first.statusCode, 202, first.body)
      const [started] = first.json().runs
      const runs = await runsOf(app, hook.streamId)
      assert.equal(runs.length, 1)
      assert.deepEqual(runs[0].trigger, { kind: 'hook', id: hook.id })
      assert.deepEqual(runs[0].input, { order: 42 })
      assert.equal(runs[0].id, started.id)
      const again = await call(hook.id, body, headers)
      assert.equal(again.statusCode, 200)
      assert.deepEqual(again.json(), first.json())
      assert.equal((await runsOf(app, hook.streamId)).length, 1, 'a replay starts nothing')
      // Two deliveries of one webhook-id at once (a sender's retry racing its first try): one run.
      const racing = JSON.stringify({ order: 43 })
      const racingHeaders = signed(hook.secret, racing)
      const answers = await Promise.all([call(hook.id, racing, racingHeaders), call(hook.id, racing, racingHeaders)])
      assert.deepEqual(answers.map((a) => a.statusCode).sort(), [200, 202])
      assert.deepEqual(answers[0]?.json(), answers[1]?.json())
      assert.equal((await runsOf(app, hook.streamId)).length, 2)
    })

    it('a wrong, stale, unsigned or another hook\'s signature is a 401 and starts nothing', async () => {
      const hook = await createHook('refused')
      const other = await createHook('other')
      const body = JSON.stringify({ a: 1 })
      const wrongSecret = `whsec_${randomBytes(24).toString('base64')}`
      const stale = new Date(Date.now() - 6 * 60 * 1000)
      const cases: Array<[string, Record<string, string>, RegExp]> = [
        ['wrong secret', signed(wrongSecret, body), /no webhook-signature matches/],
        ['another hook\'s secret', signed(other.secret, body), /no webhook-signature matches/],
        ['stale', signed(hook.secret, body, { at: stale }), /more than 5 minutes away/],
        ['from the future', signed(hook.secret, body, { at: new Date(Date.now() + 6 * 60 * 1000) }), /more than 5 minutes away/],
        ['unsigned', { 'content-type': 'application/json' }, /lacks a webhook-id/],
        ['a timestamp that is not a number', { ...signed(hook.secret, body), 'webhook-timestamp': 'yesterday' }, /is not a number of seconds/],
        ['body changed', signed(hook.secret, JSON.stringify({ a: 2 })), /no webhook-signature matches/],
      ]
      for (const [what, headers, reason] of cases) {
        const res = await call(hook.id, body, headers)
        assert.equal(res.statusCode, 401, what)
        assert.match(res.json().detail, reason, what)
        assert.equal(res.json().status, 401)
        assert.ok(!res.body.includes(hook.secret.slice(6)), 'no secret in the answer')
      }
      assert.equal((await runsOf(app, hook.streamId)).length, 0)
    })

    it('takes 64 KiB and refuses one byte more (413); refuses bodies that are not a JSON object', async () => {
      const hook = await createHook('sizes')
      const fill = (bytes: number) => JSON.stringify({ b: 'x'.repeat(bytes - 8) })
      const atBound = fill(64 * 1024)
      assert.equal(Buffer.byteLength(atBound), 64 * 1024)
      assert.equal((await call(hook.id, atBound, signed(hook.secret, atBound))).statusCode, 202)
      const past = fill(64 * 1024 + 1)
      const res = await call(hook.id, past, signed(hook.secret, past))
      assert.equal(res.statusCode, 413)
      assert.match(res.json().detail, /at most 64 KiB \(65536 bytes\)/)
      // Sent in chunks, without content-length: found while reading, answered in the hook's words.
      const chunked = await app.inject({ method: 'POST', url: `/hooks/${hook.id}`, payload: Readable.from([past.slice(0, 40000), past.slice(40000)]), headers: signed(hook.secret, past) })
      assert.equal(chunked.statusCode, 413)
      assert.match(chunked.json().detail, /at most 64 KiB \(65536 bytes\)/)
      for (const body of ['[1,2]', '"text"', '{"a":']) {
        assert.equal((await call(hook.id, body, signed(hook.secret, body))).statusCode, 400, body)
      }
      assert.equal((await runsOf(app, hook.streamId)).length, 1)
    })

    it('follows the API\'s JSON rules: at most 64 levels, numbers kept exact or refused, no U+0000 — a 400 naming the problem, nothing started', async () => {
      const hook = await createHook('json-rules')
      const nested = (levels: number) => `{"a":${'['.repeat(levels - 1)}1${']'.repeat(levels - 1)}}`
      const refused = async (body: string, type: string, detail: RegExp) => {
        const res = await call(hook.id, body, signed(hook.secret, body))
        assert.equal(res.statusCode, 400, `${body.slice(0, 40)}: ${res.body.slice(0, 300)}`)
        assert.equal(res.json().type, `urn:tandem:problem:${type}`)
        assert.match(JSON.stringify(res.json()), detail)
      }
      await refused(nested(5000), 'malformed-json', /nests deeper than 64 levels/)
      await refused(nested(65), 'malformed-json', /nests deeper than 64 levels/)
      await refused('{"amount":1e400}', 'validation-error', /\/amount/)
      await refused('{"id":12345678901234567890}', 'validation-error', /\/id/)
      await refused('{"text":"a\\u0000b"}', 'validation-error', /\/text/)
      assert.equal((await runsOf(app, hook.streamId)).length, 0, 'nothing started')
      const atBound = nested(64)
      const ok = await call(hook.id, atBound, signed(hook.secret, atBound))
      assert.equal(ok.statusCode, 202, ok.body)
      const exact = '{"amount":1.5,"count":9007199254740991}'
      assert.equal((await call(hook.id, exact, signed(hook.secret, exact))).statusCode, 202)
      const runs = await runsOf(app, hook.streamId)
      assert.ok(runs.some((run) => run.input.count === 9007199254740991 && run.input.amount === 1.5))
    })

    it('an unknown hook is a 404, and nothing else answers under /hooks', async () => {
      const body = '{}'
      assert.equal((await call(randomUUID(), body, signed(`whsec_${randomBytes(24).toString('base64')}`, body))).statusCode, 404)
      const hook = await createHook('nothing-else')
      for (const [method, url] of [['GET', `/hooks/${hook.id}`], ['GET', '/hooks/'], ['POST', '/hooks'], ['POST', `/hooks/${hook.id}/x`]] as const) {
        const res = await app.inject({ method, url })
        assert.ok([404, 405].includes(res.statusCode), `${method} ${url}: ${res.statusCode}`)
      }
    })

    it('a flood on one hook is cut at its rate limit while another hook still answers', async () => {
      const flooded = await createHook('flooded')
      const calm = await createHook('calm')
      const statuses: number[] = []
      for (let i = 0; i < 12; i++) {
        const body = JSON.stringify({ i })
        statuses.push((await call(flooded.id, body, signed(flooded.secret, body))).statusCode)
      }
      assert.equal(statuses.filter((s) => s === 202).length, 8)
      assert.equal(statuses.filter((s) => s === 429).length, 4)
      const body = '{"calm":true}'
      assert.equal((await call(calm.id, body, signed(calm.secret, body))).statusCode, 202)
      assert.equal((await runsOf(app, flooded.streamId)).length, 8)
    })

    it('credentials rekey re-seals hook secrets, and the hook still verifies', async () => {
      const hook = await createHook('rekeyed')
      const next = new Vault(randomBytes(32), [Buffer.from(process.env.TANDEM_SECRET_KEY as string, 'base64')])
      const count = await reseal(app.database.db, next, INBOUND_HOOK_SECRETS)
      assert.ok(count >= 1)
      const row = await app.database.db.selectFrom('inbound_hooks').selectAll().where('id', '=', hook.id).executeTakeFirstOrThrow()
      assert.equal(row.secret_key_id, next.keyId)
      assert.equal(next.open({ keyId: row.secret_key_id, ciphertext: row.secret_ciphertext }, hook.id), hook.secret)
    })

    it('a deleted hook is a 404', async () => {
      const hook = await createHook('deleted')
      assert.equal((await send(app, 'DELETE', `/api/hooks/${hook.id}`)).statusCode, 204)
      const body = '{}'
      assert.equal((await call(hook.id, body, signed(hook.secret, body))).statusCode, 404)
    })
  })
}
