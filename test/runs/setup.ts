// Shared set-up for run tests: an agent, a stream and a saved cycle through the API.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { send } from '../helpers.js'
import { waitFor } from './agent-server.js'

export const NIL = '00000000-0000-0000-0000-000000000000'

export interface PhaseSpec {
  agentId: string
  autoAdvance?: boolean
  operatorPool?: string[]
  name?: string
}

export async function createAgent(app: FastifyInstance, body: Record<string, unknown>): Promise<string> {
  const res = await send(app, 'POST', '/api/agents', { name: 'Agent', ...body })
  assert.equal(res.statusCode, 201, res.body)
  return res.json().id
}

export async function createStream(app: FastifyInstance, name = 'Support'): Promise<string> {
  const res = await send(app, 'POST', '/api/streams', { name })
  assert.equal(res.statusCode, 201, res.body)
  return res.json().id
}

export async function createCycle(app: FastifyInstance, streamId: string, phases: PhaseSpec[], triggerName = 'new-ticket'): Promise<string> {
  const res = await send(app, 'POST', `/api/cycles/streams/${streamId}/cycles`, {
    triggerName,
    description: 'Handle a ticket',
    phasesTemplate: phases.map((p, i) => ({
      id: randomUUID(),
      agentId: p.agentId,
      goal: `goal ${i}`,
      instructions: `instructions ${i}`,
      autoAdvance: p.autoAdvance ?? true,
      phaseName: p.name ?? `Phase ${i}`,
      operatorPool: p.operatorPool ?? [],
    })),
  })
  assert.equal(res.statusCode, 201, res.body)
  return res.json().id
}

export async function startRun(app: FastifyInstance, streamId: string, cycleId: string, input: unknown = { ticket: 42 }, headers: Record<string, string> = {}) {
  const res = await send(app, 'POST', `/api/cycles/streams/${streamId}/cycles/${cycleId}/runs`, { input }, headers)
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

export async function getRun(app: FastifyInstance, runId: string) {
  const res = await send(app, 'GET', `/api/runs/${runId}`)
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

/** Waits until the run is in `status` (any of them) and returns it. */
export async function runIn(app: FastifyInstance, runId: string, status: string | string[], ms = 15000) {
  const wanted = [status].flat()
  let last: Awaited<ReturnType<typeof getRun>> | undefined
  try {
    return await waitFor(async () => {
      last = await getRun(app, runId)
      return wanted.includes(last.status) ? last : undefined
    }, ms, `run ${runId} to be ${wanted.join('|')}`)
  } catch (error) {
    // Say where the run stood, so a timeout in CI tells what it was doing.
    const phases = (last?.phases ?? []).map((p: { status?: string }) => p.status).join(',')
    throw new Error(`${(error as Error).message}; it was ${last?.status ?? 'unread'} (phases: ${phases || 'none'})`)
  }
}
