// Fair shares of the connection slots: with TANDEM_MAX_CONNECTIONS=60 one member key opened 60 event
// streams and every other request, /healthz included, got an empty reply. Now a principal holds at most an eighth of
// the slots and a peer a quarter (event streams and long-polling claims together); one more is a 429 problem that
// closes its connection; streams end after TANDEM_SSE_MAX_LIFETIME_S and resume with Last-Event-ID.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { loadConfig } from '../../src/config.js'
import { ensureWorkspace } from '../../src/workspaces/store.js'
import { appendEvent } from '../../src/events/store.js'
import { openEventStream } from '../events/sse-client.js'
import { waitFor } from '../wait.js'
import { bearer, createKey } from '../auth.js'

interface Opened {
  status: number | 'no reply'
  type?: string
  close(): void
}

/** Opens an event stream on its own socket; resolves with the status (and a refusal's problem type). */
function openStream(url: string, key: string): Promise<Opened> {
  return new Promise((resolve) => {
    const request = http.get(url, { agent: false, headers: { accept: 'text/event-stream', authorization: `Bearer ${key}` } }, (response) => {
      const close = () => request.destroy()
      if (response.statusCode !== 200) {
        let body = ''
        response.setEncoding('utf8')
        response.on('data', (text: string) => (body += text))
        response.on('end', () => resolve({ status: response.statusCode ?? 0, type: body.startsWith('{') ? JSON.parse(body).type : undefined, close }))
        return
      }
      resolve({ status: 200, close })
    })
    request.on('error', () => resolve({ status: 'no reply', close: () => request.destroy() }))
  })
}

/** A request by fetch with its time; a failure (an empty reply) is its message. */
async function timed(url: string, headers: Record<string, string> = {}): Promise<{ status: number | string; ms: number }> {
  const started = performance.now()
  try {
    const res = await fetch(url, { headers })
    await res.arrayBuffer()
    return { status: res.status, ms: performance.now() - started }
  } catch (error) {
    return { status: String((error as Error).cause ?? error), ms: performance.now() - started }
  }
}

async function connectionsSettle(app: FastifyInstance, atMost: number): Promise<void> {
  const open = () => new Promise<number>((resolve) => app.server.getConnections((_error, count) => resolve(count)))
  await waitFor(async () => (await open()) <= atMost, { timeoutMs: 5000, what: `at most ${atMost} open connections` })
}

/** Waits until the instance holds `count` long-lived requests (event streams, waiting claims). */
const heldSettle = (app: FastifyInstance, count: number, timeoutMs = 2000) =>
  waitFor(() => app.heldRequests.held === count, { timeoutMs, what: `${count} held requests` })

describe('fair-share settings', () => {
  it('default to an eighth and a quarter of TANDEM_MAX_CONNECTIONS, at least one, and are configurable', () => {
    assert.deepEqual([loadConfig({ TANDEM_MAX_CONNECTIONS: '60' }).maxStreamsPerKey, loadConfig({ TANDEM_MAX_CONNECTIONS: '60' }).maxStreamsPerPeer], [7, 15])
    assert.deepEqual([loadConfig({}).maxStreamsPerKey, loadConfig({}).maxStreamsPerPeer], [128, 256])
    assert.deepEqual([loadConfig({ TANDEM_MAX_CONNECTIONS: '3' }).maxStreamsPerKey, loadConfig({ TANDEM_MAX_CONNECTIONS: '3' }).maxStreamsPerPeer], [1, 1])
    const set = loadConfig({ TANDEM_MAX_CONNECTIONS: '60', TANDEM_MAX_STREAMS_PER_KEY: '2', TANDEM_MAX_STREAMS_PER_PEER: '60' })
    assert.deepEqual([set.maxStreamsPerKey, set.maxStreamsPerPeer], [2, 60])
    assert.throws(() => loadConfig({ TANDEM_MAX_CONNECTIONS: '60', TANDEM_MAX_STREAMS_PER_KEY: '61' }), /TANDEM_MAX_STREAMS_PER_KEY: must be a whole number from 1 to 60/)
    assert.throws(() => loadConfig({ TANDEM_MAX_STREAMS_PER_PEER: '0' }), /TANDEM_MAX_STREAMS_PER_PEER/)
    assert.equal(loadConfig({}).sseMaxLifetimeMs, 3600_000)
    assert.throws(() => loadConfig({ TANDEM_SSE_MAX_LIFETIME_S: '0' }), /TANDEM_SSE_MAX_LIFETIME_S/)
  })
})

for (const dialect of dialects()) {
  describe(`fair shares of the connection slots (${dialect})`, () => {
    let app: FastifyInstance
    let base: string
    let streamId: string
    let greedy: string
    let other: string
    before(async () => {
      app = await build(dialect, { TANDEM_AUTH: 'required', TANDEM_MAX_CONNECTIONS: '60' })
      base = await app.listen({ port: 0, host: '127.0.0.1' })
      const workspaceId = await ensureWorkspace(app.database.db, 'default')
      greedy = (await createKey(app, { workspaceId, name: 'Greedy' })).key
      other = (await createKey(app, { workspaceId, name: 'Other' })).key
      streamId = (await send(app, 'POST', '/api/streams', { name: 'watched' }, bearer(other))).json().id
    })
    after(() => app.close())

    it('one key trying to take every slot gets its share; /healthz and another user\'s reads answer within 2 s', async (t) => {
      const url = `${base}/api/streams/${streamId}/events`
      const attempts = await Promise.all(Array.from({ length: 60 }, () => openStream(url, greedy)))
      try {
        const held = attempts.filter((a) => a.status === 200)
        const refused = attempts.filter((a) => a.status === 429)
        assert.equal(held.length, 7, `statuses: ${attempts.map((a) => a.status).join(',')}`)
        assert.equal(refused.length, 53)
        for (const attempt of refused) assert.equal(attempt.type, 'urn:tandem:problem:rate-limited')
        // The refused requests' connections close; the held streams stay.
        await connectionsSettle(app, 10)
        const probes = await Promise.all([
          timed(`${base}/healthz`),
          timed(`${base}/api/streams`, bearer(other)),
          timed(`${base}/api/streams/${streamId}/events?after=0`, { authorization: `Bearer ${other}`, accept: 'application/json' }),
        ])
        t.diagnostic(`probes answered in ${probes.map((p) => p.ms.toFixed(0)).join(', ')} ms`)
        for (const probe of probes) {
          assert.equal(probe.status, 200)
          assert.ok(probe.ms < 2000, `answered in ${probe.ms.toFixed(0)} ms`)
        }
        const theirs = await openStream(url, other)
        assert.equal(theirs.status, 200, 'another user still opens a stream')
        theirs.close()
        // Trying again changes nothing while the share is held.
        assert.equal((await openStream(url, greedy)).status, 429)
      } finally {
        for (const attempt of attempts) attempt.close()
      }
      // Closed streams give their slots back.
      await heldSettle(app, 0)
      const again = await openStream(url, greedy)
      assert.equal(again.status, 200)
      again.close()
    })
  })

  describe(`shares per peer and for long-polling claims (${dialect})`, () => {
    let app: FastifyInstance
    let base: string
    let streamId: string
    let keys: string[]
    let agentKey: string
    before(async () => {
      app = await build(dialect, { TANDEM_AUTH: 'required', TANDEM_MAX_STREAMS_PER_KEY: '2', TANDEM_MAX_STREAMS_PER_PEER: '3' })
      base = await app.listen({ port: 0, host: '127.0.0.1' })
      const workspaceId = await ensureWorkspace(app.database.db, 'default')
      const admin = (await createKey(app, { workspaceId, name: 'Admin', role: 'admin' })).key
      keys = [admin, (await createKey(app, { workspaceId, name: 'Second' })).key]
      streamId = (await send(app, 'POST', '/api/streams', { name: 's' }, bearer(admin))).json().id
      const agent = (await send(app, 'POST', '/api/agents', { name: 'Puller', providerType: 'custom_token_only' }, bearer(admin))).json()
      agentKey = (await createKey(app, { workspaceId, name: 'puller', agentId: agent.id })).key
    })
    after(() => app.close())

    const until = (held: number) => heldSettle(app, held)

    it('a key holds at most its share, a peer at most its own, and a closed stream frees its slot', async () => {
      const url = `${base}/api/streams/${streamId}/events`
      const first = [await openStream(url, keys[0] as string), await openStream(url, keys[0] as string)]
      assert.deepEqual(first.map((o) => o.status), [200, 200])
      assert.equal((await openStream(url, keys[0] as string)).status, 429, 'past the key\'s share')
      const second = await openStream(url, keys[1] as string)
      assert.equal(second.status, 200)
      assert.equal((await openStream(url, keys[1] as string)).status, 429, 'past the peer\'s share')
      first[0]?.close()
      await until(2)
      const replaced = await openStream(url, keys[1] as string)
      assert.equal(replaced.status, 200)
      for (const opened of [first[1], second, replaced]) opened?.close()
      await until(0)
    })

    it('a long-polling claim holds a slot while it waits; a claim without waitSeconds does not', async () => {
      const claim = (waitSeconds: number) => send(app, 'POST', '/api/tasks/claim', { waitSeconds }, bearer(agentKey))
      const waiting = [claim(3), claim(3)]
      await until(2)
      const refused = await claim(3)
      assert.equal(refused.statusCode, 429)
      assert.equal(refused.json().type, 'urn:tandem:problem:rate-limited')
      assert.match(refused.json().detail, /TANDEM_MAX_STREAMS_PER_KEY/)
      assert.equal((await claim(0)).statusCode, 204)
      assert.deepEqual((await Promise.all(waiting)).map((r) => r.statusCode), [204, 204])
      await until(0)
    })
  })

  describe(`the longest an event stream lives (${dialect})`, () => {
    let app: FastifyInstance
    let base: string
    before(async () => {
      app = await build(dialect, { TANDEM_SSE_MAX_LIFETIME_S: '1' })
      base = await app.listen({ port: 0, host: '127.0.0.1' })
    })
    after(() => app.close())

    it('ends the stream after TANDEM_SSE_MAX_LIFETIME_S; the client resumes with Last-Event-ID', async () => {
      const workspaceId = await ensureWorkspace(app.database.db, 'default')
      const streamId = (await send(app, 'POST', '/api/streams', { name: 'short-lived' })).json().id as string
      const append = (n: number) => appendEvent(app.database.db, { workspaceId, streamId, type: 'message.created', data: { n } })
      await append(1)
      const first = await openEventStream(`${base}/api/streams/${streamId}/events?after=0`)
      const [event] = await first.events(1)
      await first.ended
      assert.equal(app.heldRequests.held, 0)
      await append(2)
      const resumed = await openEventStream(`${base}/api/streams/${streamId}/events`, { 'last-event-id': event?.id as string })
      try {
        assert.deepEqual((await resumed.events(1)).map((m) => [m.id, JSON.parse(m.data as string).data.n]), [['2', 2]])
      } finally {
        resumed.close()
      }
    })

    it('ends the inbox feed after TANDEM_SSE_MAX_LIFETIME_S too, giving its slot back', async () => {
      const feed = await openEventStream(`${base}/api/me/inbox/events`)
      assert.equal(feed.status, 200)
      const ended = await Promise.race([feed.ended.then(() => true), sleep(5000).then(() => false)])
      feed.close()
      assert.ok(ended, 'the inbox feed was still open after 5 s')
      await heldSettle(app, 0, 1000)
    })
  })
}
