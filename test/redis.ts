// A Redis of the test's own (Debian's redis-server) on a free loopback port, so that a test can stop it mid-way.
import { spawn, type ChildProcess } from 'node:child_process'
import { connect, createServer } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'

export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** Starts redis-server on `port` and resolves once it takes connections. */
export async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
  for (let i = 0; i < 250; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => socket.end(() => resolve(true)))
      socket.on('error', () => resolve(false))
    })
    if (up) return child
    await sleep(20)
  }
  child.kill()
  throw new Error('redis-server did not start')
}
