// Access logs: with TANDEM_ACCESS_LOG=on the real process writes one structured line per request (pino JSON with the
// route template, status and duration); without it, none.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'

async function requestLines(env: Record<string, string>): Promise<Array<Record<string, unknown>>> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', DATABASE_URL: 'sqlite::memory:', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const lines: Array<Record<string, unknown>> = []
  const url = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const entry = JSON.parse(line) as Record<string, unknown>
      lines.push(entry)
      const match = /Tandem listening on (http:\/\/\S+)/.exec(String(entry.msg))
      if (match) resolve(match[1] as string)
    })
    child.on('exit', (code) => reject(new Error(`server exited with ${code}`)))
  })
  try {
    const base = await url
    const created = await fetch(`${base}/api/agents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Logged' }) })
    const { id } = (await created.json()) as { id: string }
    assert.equal((await fetch(`${base}/api/agents/${id}?x=1`)).status, 200)
    child.kill('SIGTERM')
    await once(child, 'exit')
  } finally {
    child.kill('SIGKILL')
  }
  return lines.filter((line) => line.msg === 'request')
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
