// A readable 413: a body past the 1 MiB limit is answered with the problem, and the server reads (and
// drops) the rest of the body, a bounded amount, so that the client finishes sending and always reads the answer
// instead of EPIPE / "fetch failed". Over a real socket: thirty 2 MiB bodies in a row, with a length and chunked.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import net from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { build, dialects } from '../helpers.js'

const TWO_MIB = Buffer.alloc(2 * 1024 * 1024, 'a')

/** A body sent in 64 KiB pieces without a length (chunked). */
function chunked(bytes: Buffer): ReadableStream<Uint8Array> {
  let offset = 0
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) return controller.close()
      controller.enqueue(bytes.subarray(offset, offset + 65536))
      offset += 65536
    },
  })
}

/**
 * One POST over its own socket, as a client that sends its whole body before it reads: the body goes in 64 KiB
 * pieces with a pause between (so the server has answered, and before the fix closed, while it still sends), and
 * the answer is read only afterwards. Returns the status line, or what went wrong.
 */
async function postThenRead(port: number, body: Buffer, chunked: boolean, type = 'application/json'): Promise<string> {
  const socket = net.connect(port, '127.0.0.1')
  await new Promise((resolve) => socket.once('connect', resolve))
  socket.pause()
  let failure = ''
  socket.on('error', (error: NodeJS.ErrnoException) => (failure = error.code ?? error.message))
  const length = chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${body.length}`
  socket.write(`POST /api/agents HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${type}\r\n${length}\r\n\r\n`)
  for (let offset = 0; offset < body.length && !socket.destroyed; offset += 65536) {
    const piece = body.subarray(offset, offset + 65536)
    socket.write(chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece)
    await sleep(1)
  }
  if (chunked && !socket.destroyed) socket.write('0\r\n\r\n')
  // Part of the client it plays: a moment after the body before it starts reading.
  await sleep(50)
  let answer = ''
  socket.setEncoding('utf8')
  socket.on('data', (text: string) => (answer += text))
  socket.resume()
  for (let waited = 0; waited < 5000 && !answer.includes('}') && !socket.destroyed; waited += 10) await sleep(10)
  socket.destroy()
  return answer === '' ? `no answer (${failure})` : answer
}

/** A raw request with a body far past what the server drains: answered (or cut), never hanging. */
function postRaw(base: string, bytes: number): Promise<number | 'closed'> {
  return new Promise((resolve) => {
    const request = http.request(`${base}/api/agents`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(bytes) } }, (response) => {
      response.resume()
      resolve(response.statusCode ?? 0)
    })
    request.on('error', () => resolve('closed'))
    const piece = Buffer.alloc(1024 * 1024, 'a')
    const write = (left: number): void => {
      if (left <= 0) return void request.end()
      if (request.write(piece)) write(left - piece.length)
      else request.once('drain', () => write(left - piece.length))
    }
    write(bytes)
  })
}

// No database is involved: once, on SQLite.
for (const dialect of dialects().filter((d) => d === 'sqlite')) {
  describe(`a readable 413 over a real socket (${dialect})`, () => {
    let app: FastifyInstance
    let base: string
    before(async () => {
      app = await build(dialect)
      base = await app.listen({ port: 0, host: '127.0.0.1' })
    })
    after(() => app.close())

    it('answers thirty 2 MiB bodies in a row, each with its 413 problem, to a client that reads after sending', async () => {
      const port = Number(new URL(base).port)
      for (let i = 0; i < 30; i++) {
        const answer = await postThenRead(port, TWO_MIB, i % 2 === 1)
        assert.match(answer, /^HTTP\/1\.1 413 /, `request ${i}: ${answer.slice(0, 80)}`)
        assert.match(answer, /"type":"urn:tandem:problem:payload-too-large"/)
      }
    })

    it('a body of another media type gets its 415 problem the same way', async () => {
      const port = Number(new URL(base).port)
      for (let i = 0; i < 3; i++) {
        const answer = await postThenRead(port, TWO_MIB, false, 'text/plain')
        assert.match(answer, /^HTTP\/1\.1 415 /, `request ${i}: ${answer.slice(0, 80)}`)
      }
    })

    it('fetch reads the 413 problem, with a length or chunked, and the connection serves on', async () => {
      for (let i = 0; i < 6; i++) {
        const body = i % 2 === 0 ? TWO_MIB : chunked(TWO_MIB)
        const res = await fetch(`${base}/api/agents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body, duplex: 'half' } as RequestInit)
        assert.equal(res.status, 413, `request ${i}`)
        const problem = (await res.json()) as { type: string; detail: string }
        assert.equal(problem.type, 'urn:tandem:problem:payload-too-large')
        assert.match(problem.detail, /at most 1 MiB/)
      }
      // The connection still serves: a body within the limit is taken.
      const ok = await fetch(`${base}/api/agents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'After the 413s' }) })
      assert.equal(ok.status, 201)
    })

    it('does not read without end: a body far past the drain bound is answered or cut, never waited for', async () => {
      const outcome = await postRaw(base, 64 * 1024 * 1024)
      assert.ok(outcome === 413 || outcome === 'closed', String(outcome))
    })
  })
}
