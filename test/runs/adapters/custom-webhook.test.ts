// The webhook agent's delivery (src/runs/adapters/custom-webhook.ts), called with undici's request through the
// egress guard, against a local agent on 127.0.0.1: what it sends, how it reads a compressed answer (gzip,
// deflate, br: request, unlike fetch, leaves decoding to its caller), the 1 MiB bound on the decoded answer, a
// Retry-After, and a refused connection. A plain streamed answer and the retries of the whole run are covered
// end to end in test/agents/streaming.test.ts and test/runs/failures.test.ts.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { ServerResponse } from 'node:http'
import { createServer, type AddressInfo } from 'node:net'
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib'
import { customWebhook } from '../../../src/runs/adapters/custom-webhook.js'
import { adapterContext, agentTarget, taskPayload } from '../../fakes/vendors/context.js'
import { startHttpFake, type HttpFake, type Reply } from '../../fakes/vendors/http.js'

/** A reply of raw bytes, with the headers given. */
const bytes = (body: Buffer, headers: Record<string, string>, status = 200): Reply => ({
  stream: (res: ServerResponse) => res.writeHead(status, { 'content-length': String(body.length), ...headers }).end(body),
})

const answer = (text: string) => Buffer.from(JSON.stringify({ output: { text } }))

/** A port on 127.0.0.1 that nothing listens on (it was open a moment ago, and is closed). */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

describe('custom_webhook delivery through undici request', () => {
  let agent: HttpFake
  let reply: Reply = { body: { output: { text: 'plain' } } }
  before(async () => {
    agent = await startHttpFake(() => reply)
  })
  after(() => agent.close())

  const deliver = (context = adapterContext()) => customWebhook.deliver(taskPayload(), agentTarget('custom_webhook', `${agent.url}/hook`), context)

  it('sends the task as JSON with user-agent Tandem-Runs/1', async () => {
    reply = { body: { output: { text: 'plain' } } }
    const outcome = await deliver()
    assert.equal(outcome.kind, 'answered', JSON.stringify(outcome))
    const received = agent.requests.at(-1)!
    assert.equal(received.method, 'POST')
    assert.equal(received.path, '/hook')
    assert.equal(received.headers['user-agent'], 'Tandem-Runs/1')
    assert.equal(received.headers['content-type'], 'application/json')
    assert.deepEqual(received.body, taskPayload())
  })

  const codings: Array<[string, (data: Buffer) => Buffer]> = [['gzip', gzipSync], ['x-gzip', gzipSync], ['deflate', deflateSync], ['br', brotliCompressSync]]
  for (const [coding, compress] of codings) {
    it(`reads an answer compressed with content-encoding ${coding}`, async () => {
      const text = `the answer, sent as ${coding}`
      reply = bytes(compress(answer(text)), { 'content-type': 'application/json', 'content-encoding': coding })
      const outcome = await deliver()
      assert.equal(outcome.kind, 'answered', JSON.stringify(outcome))
      assert.deepEqual(outcome.kind === 'answered' && outcome.output, { text })
    })
  }

  it('an answer larger than 1 MiB once decoded fails with agent-failed, however small it came (a gzip bomb)', async () => {
    // Valid JSON, 2 MiB of it trailing spaces: about 2 KiB gzipped.
    const bomb = gzipSync(Buffer.concat([answer('inflated'), Buffer.alloc(2 * 1024 * 1024, ' ')]))
    assert.ok(bomb.length < 16 * 1024, `${bomb.length} bytes compressed`)
    reply = bytes(bomb, { 'content-type': 'application/json', 'content-encoding': 'gzip' })
    const outcome = await deliver()
    assert.equal(outcome.kind, 'failed', JSON.stringify(outcome))
    assert.equal(outcome.kind === 'failed' && outcome.code, 'agent-failed')
    assert.match(outcome.kind === 'failed' ? outcome.detail : '', /larger than 1048576 bytes/)
  })

  it('reads a streamed answer compressed with gzip: the deltas, then the output', async () => {
    const events = ['a', 'b'].map((delta) => `data: ${JSON.stringify({ delta })}\n\n`).join('') + `data: ${JSON.stringify({ output: { text: 'ab' } })}\n\n`
    reply = bytes(gzipSync(Buffer.from(events)), { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' })
    const deltas: string[] = []
    const outcome = await deliver({ ...adapterContext(), onDelta: (text) => deltas.push(text) })
    assert.equal(outcome.kind, 'answered', JSON.stringify(outcome))
    assert.deepEqual(outcome.kind === 'answered' && outcome.output, { text: 'ab' })
    assert.deepEqual(deltas, ['a', 'b'])
  })

  it('a 503 with Retry-After: 7 is a retry after 7 seconds', async () => {
    reply = { status: 503, headers: { 'retry-after': '7' }, body: { error: 'overloaded' } }
    assert.deepEqual(await deliver(), { kind: 'retry', detail: 'the agent answered 503', retryAfterMs: 7000 })
  })

  it('a refused connection is a retry that names the error code', async () => {
    const port = await closedPort()
    const outcome = await customWebhook.deliver(taskPayload(), agentTarget('custom_webhook', `http://127.0.0.1:${port}/hook`), adapterContext())
    assert.deepEqual(outcome, { kind: 'retry', detail: 'the connection failed (ECONNREFUSED)' })
  })
  it('a compressed answer that stops half way ends at the dispatch deadline as a retry (the decoder fails with the body), not never', { timeout: 15000 }, async () => {
    const whole = gzipSync(Buffer.from(JSON.stringify({ output: { text: 'x'.repeat(200_000) } })))
    let stalled: ServerResponse | undefined
    reply = {
      stream: (res: ServerResponse) => {
        stalled = res
        // Half the gzip stream, then nothing: the connection stays open.
        res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'application/json' })
        res.write(whole.subarray(0, Math.floor(whole.length / 2)))
      },
    }
    const started = Date.now()
    const outcome = await deliver(adapterContext(800))
    stalled?.destroy()
    assert.equal(outcome.kind, 'retry', JSON.stringify(outcome))
    assert.match((outcome as { detail: string }).detail, /no answer within 800 ms/)
    assert.ok(Date.now() - started < 5000, 'ended at its deadline')
  })
})
