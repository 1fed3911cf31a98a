// test lane: clock — retries whose back-off runs on the real clock (seconds per failed delivery) (scripts/test.mjs).
// Webhook subscriptions: the endpoints (admins only, secrets shown once), signed deliveries verified with the
// standardwebhooks library, filters, retries with back-off, failure after 8 attempts, auto-disable, the
// egress guard, and endpoints that hang, redirect or answer garbage.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { Webhook as Verifier } from 'standardwebhooks'
import { build, dialects, pointers, send } from '../helpers.js'
import { ensureWorkspace } from '../../src/workspaces/store.js'
import { startReceiver } from './receiver.js'
import { createKey } from '../auth.js'
import { waitFor } from '../wait.js'

const contentOf = (text: string) => ({ blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: [{ type: 'text', text }] }] }] })

/** `read`'s first value `ok` accepts (test/wait.ts waitFor); the failure shows the last one read. */
async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, ms = 15000): Promise<T> {
  let last: T | undefined
  await waitFor(async () => ok((last = await read())), { timeoutMs: ms, everyMs: 25, what: 'a condition' }).catch((error: Error) => {
    throw new Error(`${error.message}; last: ${JSON.stringify(last)}`)
  })
  return last as T
}

for (const dialect of dialects()) {
  describe(`webhooks (${dialect})`, () => {
    let app: FastifyInstance
    let streamId: string
    let member: Record<string, string>
    let foreignAdmin: Record<string, string>
    const post = (text: string, stream = streamId) => send(app, 'POST', `/api/chat/streams/${stream}/messages`, { content: contentOf(text) })
    const deliveries = async (id: string) => (await send(app, 'GET', `/api/webhooks/${id}/deliveries?limit=100`)).json().data as Array<Record<string, unknown>>

    before(async () => {
      app = await build(dialect, { TANDEM_AUTH: 'local', TANDEM_EGRESS_ALLOW: '127.0.0.0/8', TANDEM_WEBHOOK_RETRY_BASE_MS: '1', TANDEM_WEBHOOK_TIMEOUT_MS: '2000' }, { ownDatabase: true })
      streamId = (await send(app, 'POST', '/api/streams', { name: 'hooks' })).json().id
      const db = app.database.db
      const workspaceId = await ensureWorkspace(db, 'default')
      member = (await createKey(app, { workspaceId, name: 'member', role: 'member' })).headers
      foreignAdmin = (await createKey(app, { workspace: 'elsewhere', name: 'x', role: 'admin' })).headers
    })
    after(() => app.close())

    it('subscriptions: create (secret once), read, list, update, rotate, delete; admins only; other workspaces see nothing', async () => {
      const created = await send(app, 'POST', '/api/webhooks', { url: 'https://hooks.example.com/in', events: ['message.created'], description: 'd' })
      assert.equal(created.statusCode, 201)
      const hook = created.json()
      assert.equal(created.headers.location, `/api/webhooks/${hook.id}`)
      assert.match(hook.secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
      assert.deepEqual({ ...hook, id: 0, secret: 0, createdAt: 0, updatedAt: 0 }, {
        id: 0, secret: 0, createdAt: 0, updatedAt: 0, url: 'https://hooks.example.com/in', events: ['message.created'], streamId: null, description: 'd', enabled: true, disabledReason: null,
      })
      const read = await send(app, 'GET', `/api/webhooks/${hook.id}`)
      assert.equal(read.statusCode, 200)
      assert.equal(read.json().secret, undefined)
      assert.ok(!read.body.includes(hook.secret))
      const list = await send(app, 'GET', '/api/webhooks')
      assert.ok(!list.body.includes(hook.secret))
      assert.ok(list.json().data.some((w: { id: string }) => w.id === hook.id))
      const stored = await app.database.db.selectFrom('webhooks').selectAll().where('id', '=', hook.id).executeTakeFirstOrThrow()
      assert.ok(!JSON.stringify(stored).includes(hook.secret.slice(6)), 'the secret is stored sealed')

      const patched = await send(app, 'PATCH', `/api/webhooks/${hook.id}`, { events: ['*'], enabled: false })
      assert.equal(patched.statusCode, 200)
      assert.deepEqual([patched.json().events, patched.json().enabled, patched.json().disabledReason], [['*'], false, 'disabled by an admin'])
      const enabled = (await send(app, 'PATCH', `/api/webhooks/${hook.id}`, { enabled: true })).json()
      assert.deepEqual([enabled.enabled, enabled.disabledReason], [true, null])
      const rotated = await send(app, 'POST', `/api/webhooks/${hook.id}/rotate-secret`)
      assert.equal(rotated.statusCode, 200)
      assert.match(rotated.json().secret, /^whsec_/)
      assert.notEqual(rotated.json().secret, hook.secret)

      for (const headers of [member]) {
        assert.equal((await send(app, 'GET', '/api/webhooks', undefined, headers)).statusCode, 403)
        assert.equal((await send(app, 'POST', '/api/webhooks', { url: 'https://x.example', events: ['*'] }, headers)).statusCode, 403)
        assert.equal((await send(app, 'POST', `/api/webhooks/${hook.id}/rotate-secret`, undefined, headers)).statusCode, 403)
      }
      assert.equal((await send(app, 'GET', `/api/webhooks/${hook.id}`, undefined, foreignAdmin)).statusCode, 404)
      assert.equal((await send(app, 'PATCH', `/api/webhooks/${hook.id}`, { enabled: false }, foreignAdmin)).statusCode, 404)
      assert.equal((await send(app, 'DELETE', `/api/webhooks/${hook.id}`, undefined, foreignAdmin)).statusCode, 404)
      assert.equal((await send(app, 'GET', `/api/webhooks/${hook.id}/deliveries`, undefined, foreignAdmin)).statusCode, 404)
      assert.equal((await send(app, 'DELETE', `/api/webhooks/${hook.id}`)).statusCode, 204)
      assert.equal((await send(app, 'GET', `/api/webhooks/${hook.id}`)).statusCode, 404)
      assert.equal((await send(app, 'DELETE', `/api/webhooks/${hook.id}`)).statusCode, 404)
    })

    it('bad bodies are 400s naming each field; an unknown stream is a 422; nothing is created', async () => {
      const before = (await send(app, 'GET', '/api/webhooks?limit=100')).json().data.length
      const cases: Array<[unknown, string[]]> = [
        [{ events: ['*'] }, ['/url']],
        [{ url: 'ftp://x.example/in', events: ['*'] }, ['/url']],
        [{ url: `https://x.example/${'a'.repeat(2048)}`, events: ['*'] }, ['/url']],
        [{ url: 'https://x.example', events: [] }, ['/events']],
        [{ url: 'https://x.example', events: ['message.deleted'] }, ['/events/0']],
        [{ url: 'https://x.example', events: ['*', 'run.created'] }, ['/events']],
        [{ url: 'https://x.example', events: ['run.created', 'run.created'] }, ['/events']],
        [{ url: 'https://x.example', events: ['*'], description: 'x'.repeat(501) }, ['/description']],
        [{ url: 'https://x.example', events: ['*'], streamId: 'nope' }, ['/streamId']],
        [{ url: 'https://x.example', events: ['*'], secret: 'mine' }, ['/secret']],
      ]
      for (const [body, expected] of cases) {
        const res = await send(app, 'POST', '/api/webhooks', body)
        assert.equal(res.statusCode, 400, JSON.stringify(body))
        assert.deepEqual(pointers(res), expected, JSON.stringify(body))
      }
      assert.equal((await send(app, 'POST', '/api/webhooks', { url: `https://x.example/${'a'.repeat(2028)}`, events: ['*'], description: 'x'.repeat(500) })).statusCode, 201)
      const unknown = await send(app, 'POST', '/api/webhooks', { url: 'https://x.example', events: ['*'], streamId: '0190d5a8-0000-7000-8000-00000000000a' })
      assert.equal(unknown.statusCode, 422)
      assert.deepEqual(pointers(unknown), ['/streamId'])
      const created = (await send(app, 'GET', '/api/webhooks?limit=100')).json().data
      assert.equal(created.length, before + 1)
      const id = created[created.length - 1].id
      assert.deepEqual(pointers(await send(app, 'PATCH', `/api/webhooks/${id}`, {})), [''])
      assert.deepEqual(pointers(await send(app, 'PATCH', `/api/webhooks/${id}`, { enabled: 'yes', url: 'x' })), ['/enabled', '/url'])
      await send(app, 'DELETE', `/api/webhooks/${id}`)
    })

    it('a matching event is POSTed as its JSON, signed so that the standardwebhooks verifier accepts it; filters apply', async () => {
      const receiver = await startReceiver()
      const other = (await send(app, 'POST', '/api/streams', { name: 'other' })).json().id
      try {
        const all = (await send(app, 'POST', '/api/webhooks', { url: receiver.url, events: ['message.edited'], streamId })).json()
        const posted = (await post('sign me')).json()
        await post('elsewhere', other)
        const edited = (await send(app, 'PATCH', `/api/chat/messages/${posted.id}`, { content: contentOf('signed') })).json()
        const [request] = await receiver.waitFor(1)
        // Every delivery is written with its event, so once none of this subscription's is pending every POST it
        // would make has been made. Only the edit on the subscribed stream (a retry of it, should the receiver be
        // slow, has the same webhook-id).
        await until(() => deliveries(all.id), (d) => d.every((delivery) => delivery.status !== 'pending'))
        assert.equal(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size, 1)
        const headers = request?.headers as Record<string, string>
        const event = new Verifier(all.secret).verify(request?.body as string, headers) as Record<string, unknown>
        assert.equal(event.type, 'message.edited')
        assert.equal(event.streamId, streamId)
        assert.deepEqual(event.data, edited)
        assert.equal(headers['content-type'], 'application/json')
        assert.throws(() => new Verifier(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(request?.body as string, headers))
        const log = await until(() => deliveries(all.id), (d) => d[0]?.status === 'succeeded')
        assert.equal(log.length, 1)
        assert.equal(headers['webhook-id'], log[0]?.id)
        assert.deepEqual({ ...log[0], id: 0, createdAt: 0 }, {
          id: 0, createdAt: 0, eventId: event.id, streamId, type: 'message.edited', status: 'succeeded', attempts: 1, lastStatus: 200, lastError: null, nextAttemptAt: null,
        })
        // After a rotation, the new secret signs.
        const rotated = (await send(app, 'POST', `/api/webhooks/${all.id}/rotate-secret`)).json()
        const seen = receiver.received.length
        await send(app, 'PATCH', `/api/chat/messages/${posted.id}`, { content: contentOf('rotated') })
        const second = (await receiver.waitFor(seen + 1)).at(-1)
        assert.ok(new Verifier(rotated.secret).verify(second?.body as string, second?.headers as Record<string, string>))
        assert.throws(() => new Verifier(all.secret).verify(second?.body as string, second?.headers as Record<string, string>))
        await send(app, 'DELETE', `/api/webhooks/${all.id}`)
      } finally {
        await receiver.close()
      }
    })

    it('retries after 5xx, a redirect, garbage and a hang, with the same webhook-id and growing back-off, until a 2xx', async () => {
      const answers = [500, 302, 404, 'hang', 200] as const
      const receiver = await startReceiver((_request, index) => answers[index] ?? 200)
      try {
        const hook = (await send(app, 'POST', '/api/webhooks', { url: receiver.url, events: ['*'], streamId })).json()
        await post('retry me')
        const requests = await receiver.waitFor(5, 20000)
        const ids = new Set(requests.map((r) => r.headers['webhook-id']))
        assert.equal(ids.size, 1)
        const [log] = await until(() => deliveries(hook.id), (d) => d[0]?.status === 'succeeded')
        assert.equal(log?.attempts, 5)
        assert.equal(log?.lastStatus, 200)
        // Back-off: 1, 4, 16, 64 ms (plus the 2 s time-out of the hang) between the attempts.
        const gaps = requests.slice(1).map((r, i) => r.at - (requests[i] as { at: number }).at)
        assert.ok((gaps[3] as number) >= 64, `gaps ${gaps.join(', ')}`)
        await send(app, 'DELETE', `/api/webhooks/${hook.id}`)
      } finally {
        await receiver.close()
      }
    })

    it('8 failed attempts fail the delivery, saying why; 50 failed deliveries in a row disable the subscription', async () => {
      const receiver = await startReceiver(() => 503)
      try {
        const hook = (await send(app, 'POST', '/api/webhooks', { url: receiver.url, events: ['message.created'], streamId })).json()
        await post('fail 1')
        const [failed] = await until(() => deliveries(hook.id), (d) => d[0]?.status === 'failed')
        assert.deepEqual([failed?.attempts, failed?.lastStatus, failed?.lastError, failed?.nextAttemptAt], [8, 503, 'the endpoint answered 503', null])
        assert.equal(receiver.received.length, 8)
        assert.equal((await send(app, 'GET', `/api/webhooks/${hook.id}`)).json().enabled, true)
        // 48 earlier failures in a row (as if recorded): the 49th keeps it, the 50th disables it.
        await app.database.db.updateTable('webhooks').set({ consecutive_failures: 48 }).where('id', '=', hook.id).execute()
        await post('fail 2')
        await until(() => deliveries(hook.id), (d) => d[1]?.status === 'failed')
        assert.equal((await send(app, 'GET', `/api/webhooks/${hook.id}`)).json().enabled, true)
        await post('fail 3')
        await until(() => deliveries(hook.id), (d) => d[2]?.status === 'failed')
        const disabled = (await send(app, 'GET', `/api/webhooks/${hook.id}`)).json()
        assert.equal(disabled.enabled, false)
        assert.match(disabled.disabledReason, /^disabled after 50 consecutive failed deliveries; the last: the endpoint answered 503$/)
        // A delivery is written in the transaction of its event: had the disabled subscription matched, it would
        // be there once the post has answered.
        await post('not delivered')
        assert.equal((await deliveries(hook.id)).length, 3)
        // Enabled again, a success resets the count.
        await send(app, 'PATCH', `/api/webhooks/${hook.id}`, { enabled: true })
        assert.equal((await app.database.db.selectFrom('webhooks').select('consecutive_failures').where('id', '=', hook.id).executeTakeFirstOrThrow()).consecutive_failures, 0)
        await send(app, 'DELETE', `/api/webhooks/${hook.id}`)
      } finally {
        await receiver.close()
      }
    })
  })

  describe(`webhooks and the egress guard (${dialect})`, () => {
    let app: FastifyInstance
    before(async () => {
      app = await build(dialect, { TANDEM_AUTH: 'local', TANDEM_WEBHOOK_RETRY_BASE_MS: '1' }, { ownDatabase: true })
    })
    after(() => app.close())

    it('a private address is a failed attempt that says so; nothing reaches it', async () => {
      const receiver = await startReceiver()
      try {
        const streamId = (await send(app, 'POST', '/api/streams', { name: 'guarded' })).json().id
        const hook = (await send(app, 'POST', '/api/webhooks', { url: receiver.url, events: ['*'] })).json()
        await send(app, 'POST', `/api/chat/streams/${streamId}/messages`, { content: contentOf('to loopback') })
        const [log] = await until(async () => (await send(app, 'GET', `/api/webhooks/${hook.id}/deliveries`)).json().data, (d: Array<{ attempts: number; lastError: string; lastStatus: number | null }>) => (d[0]?.attempts ?? 0) >= 1)
        assert.match(log?.lastError as string, /127\.0\.0\.1.*not a public address/)
        assert.equal(log?.lastStatus, null)
        assert.equal(receiver.received.length, 0)
      } finally {
        await receiver.close()
      }
    })
  })
}
