// The deadline of an outgoing call survives garbage collection: a fetch through the egress guard to a server
// that never answers is aborted on time even while the heap is collected every few milliseconds. (Node's
// AbortSignal.any([shutdown, AbortSignal.timeout(ms)]), which the engine used before, hangs for ever here:
// the cause of the run that never failed in test/runs/failures.test.ts.)
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { deadline } from '../../src/net/deadline.js'
import { createEgressGuard } from '../../src/net/egress.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

async function hangingServer(): Promise<{ server: Server; url: string }> {
  const server = createServer(() => {}).listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  const { port } = server.address() as { port: number }
  return { server, url: `http://127.0.0.1:${port}/` }
}

describe('deadline', () => {
  it('aborts a call to a server that never answers, whatever the garbage collector does', { timeout: 20000 }, async () => {
    const { server, url } = await hangingServer()
    const guard = createEgressGuard(['127.0.0.0/8'])
    const collecting = setInterval(gc, 10)
    try {
      for (let i = 0; i < 5; i++) {
        const shutdown = new AbortController()
        const limit = deadline(200, shutdown.signal)
        const outcome = await Promise.race([
          guard.fetch(url, { method: 'POST', body: 'x', signal: limit.signal }).then(() => 'answered', (error: Error) => error.name),
          new Promise((resolve) => setTimeout(resolve, 8000, 'hung')), // the bound on a call that is never aborted
        ])
        limit.clear()
        assert.equal(outcome, 'TimeoutError', `call ${i + 1} was not aborted by its deadline`)
        assert.equal(limit.expired, true)
      }
    } finally {
      clearInterval(collecting)
      server.closeAllConnections()
      server.close()
    }
  })

  it('aborts with the parent, and clear() stops the timer', (t) => {
    // The clock is mocked: moving it past a cleared deadline shows its timer does not fire, without waiting.
    t.mock.timers.enable({ apis: ['setTimeout'] })
    const shutdown = new AbortController()
    const limit = deadline(50, shutdown.signal)
    shutdown.abort(new Error('stopping'))
    assert.equal(limit.signal.aborted, true)
    assert.equal(limit.expired, false)
    const cleared = deadline(20)
    cleared.clear()
    t.mock.timers.tick(60)
    assert.equal(cleared.signal.aborted, false)
  })
})
