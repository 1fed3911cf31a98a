// Access logs: with TANDEM_ACCESS_LOG=on the real process writes one structured line per request (pino JSON with the
// route template, status and duration); without it, none.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startServer } from '../child-server.js'

async function requestLines(env: Record<string, string>): Promise<Array<Record<string, unknown>>> {
  const server = startServer({ DATABASE_URL: 'sqlite::memory:', ...env })
  try {
    const base = await server.url
    const created = await fetch(`${base}/api/agents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Logged' }) })
    const { id } = (await created.json()) as { id: string }
    assert.equal((await fetch(`${base}/api/agents/${id}?x=1`)).status, 200)
    await server.stop()
  } finally {
    await server.stop('SIGKILL')
  }
  return server.lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.msg === 'request')
}

describe('access logs', () => {
  it('log one structured line per request when switched on', async () => {
    const lines = await requestLines({ TANDEM_ACCESS_LOG: 'on' })
    assert.equal(lines.length, 2)
    const [create, read] = lines as [Record<string, unknown>, Record<string, unknown>]
    assert.equal(create.level, 30)
    assert.equal(create.method, 'POST')
    assert.equal(create.route, '/api/agents')
    assert.equal(create.status, 201)
    assert.equal(typeof create.ms, 'number')
    assert.equal(typeof create.reqId, 'string')
    assert.equal(read.route, '/api/agents/:id')
    assert.match(String(read.url), /^\/api\/agents\/[0-9a-f-]{36}\?x=1$/)
  })

  it('log nothing per request when off (the default)', async () => {
    assert.deepEqual(await requestLines({}), [])
  })
})
