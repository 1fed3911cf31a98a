// Shared set-up for the operators' tests: keys with roles and handles, a stream with a cycle of people's
// work (it waits for a decision without any agent), and the runs a trigger started.
import type { FastifyInstance } from 'fastify'
import { createCycle, createStream, NIL } from '../runs/setup.js'
import { send } from '../helpers.js'
import { createKey } from '../auth.js'

export async function keyFor(app: FastifyInstance, handle: string, role: 'admin' | 'member', workspace = 'default'): Promise<Record<string, string>> {
  return (await createKey(app, { workspace, name: handle, handle, role })).headers
}

/** A stream with one saved cycle of people's work on `triggerName` (pool: `pool`). */
export async function waitingStream(app: FastifyInstance, triggerName = 'tick', pool: string[] = []): Promise<{ streamId: string; cycleId: string }> {
  const streamId = await createStream(app, `s-${triggerName}-${Math.random().toString(36).slice(2, 8)}`)
  const cycleId = await createCycle(app, streamId, [{ agentId: NIL, autoAdvance: false, operatorPool: pool, name: 'Review' }], triggerName)
  return { streamId, cycleId }
}

export async function runsOf(app: FastifyInstance, streamId: string): Promise<any[]> {
  const res = await send(app, 'GET', `/api/cycles/streams/${streamId}/runs?limit=100`)
  return res.json().data
}
