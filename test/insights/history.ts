// A history of decisions built through the API for the scorecard tests: a quorum of two, revise → approve, a
// rejection by an override, an expiry that approves, a cancel, an agent's failure, an auto-advancing phase, and
// tool calls of each kind (rows of the tool_calls table written while the task is open, as the engine writes them).
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { createApiKey } from '../../src/principals/store.js'
import { runClockTimer } from '../../src/waits/clock.js'
import { ALL_CLOCK_EFFECTS as CLOCK_EFFECTS } from '../../src/waits/jobs.js'
import { newId, now } from '../../src/ids.js'
import { send } from '../helpers.js'
import { keyFor } from '../schedules/setup.js'
import { createAgent, createStream, getRun } from '../runs/setup.js'

type Headers = Record<string, string>

export interface History {
  workspaceId: string
  writerId: string
  reviewerId: string
  streamId: string
  otherStreamId: string
  cycles: { a: string; b: string; c: string; d: string }
  phaseIds: { a: string; b: string; c: string; d: string }
  maria: Headers
  tom: Headers
  boss: Headers
  writerKey: Headers
  /** The decision times (ms) people made, as the runs record them. */
  writerTimes: number[]
}

const USAGE = { inputTokens: 100, outputTokens: 20 }

export async function buildHistory(app: FastifyInstance): Promise<History> {
  const db = app.database.db
  const workspaceId = (await send(app, 'GET', '/api/me')).json().workspaceId
  const maria = await keyFor(app, 'maria', 'member')
  const tom = await keyFor(app, 'tom', 'member')
  const boss = await keyFor(app, 'boss', 'admin')
  const pricing = { pricing: { inputPerMTok: 1, outputPerMTok: 2 } }
  const writerId = await createAgent(app, { name: 'Writer', providerType: 'custom_token_only', config: pricing })
  const reviewerId = await createAgent(app, { name: '=HYPERLINK("http://x")', providerType: 'custom_token_only' })
  const writerKey = { authorization: `Bearer ${(await createApiKey(db, { workspaceId, name: 'writer', agentId: writerId })).key}` }
  const reviewerKey = { authorization: `Bearer ${(await createApiKey(db, { workspaceId, name: 'reviewer', agentId: reviewerId })).key}` }
  const streamId = await createStream(app, 'Docs')
  const otherStreamId = await createStream(app, 'Billing')

  const phaseIds = { a: randomUUID(), b: randomUUID(), c: randomUUID(), d: randomUUID() }
  const cycle = async (stream: string, trigger: string, phaseId: string, agentId: string, autoAdvance: boolean, policy?: unknown) => {
    const res = await send(app, 'POST', `/api/cycles/streams/${stream}/cycles`, {
      triggerName: trigger,
      description: trigger,
      phasesTemplate: [{ id: phaseId, agentId, goal: 'g', instructions: 'i', autoAdvance, phaseName: `${trigger} phase`, operatorPool: ['maria', 'tom'] }],
      ...(policy ? { policy } : {}),
    })
    assert.equal(res.statusCode, 201, res.body)
    return res.json().id as string
  }
  const cycles = {
    a: await cycle(streamId, 'write', phaseIds.a, writerId, false, { decision: { quorum: 2 } }),
    b: await cycle(streamId, 'expiring', phaseIds.b, writerId, false, { decision: { expireAfter: 'PT1H', onExpire: 'approve' } }),
    c: await cycle(streamId, 'auto', phaseIds.c, writerId, true),
    d: await cycle(otherStreamId, 'review', phaseIds.d, reviewerId, false),
  }

  const start = async (stream: string, cycleId: string) => (await send(app, 'POST', `/api/cycles/streams/${stream}/cycles/${cycleId}/runs`, { input: { secret: 'do-not-leak' } })).json()
  const claim = async (key: Headers) => {
    const res = await send(app, 'POST', '/api/tasks/claim', {}, key)
    assert.equal(res.statusCode, 200, res.body)
    return res.json()
  }
  const answer = async (key: Headers, body: unknown = { output: { text: 'draft' }, usage: USAGE }, toolCalls = false) => {
    const payload = await claim(key)
    if (toolCalls) await addToolCalls(app, workspaceId, payload)
    const res = await send(app, 'POST', `/api/tasks/${payload.task.id}/result`, body, { authorization: `Bearer ${payload.result.token}` })
    assert.equal(res.statusCode, 200, res.body)
    return payload
  }
  const decide = async (who: Headers, run: { id: string; phases: Array<{ id: string }> }, decision: string, extra: Record<string, unknown> = {}) => {
    const res = await send(app, 'POST', `/api/runs/${run.id}/phases/${run.phases[0]!.id}/decision`, { decision, ...extra }, who)
    assert.equal(res.statusCode, 200, res.body)
    return res.json()
  }
  const since = async (runId: string) => Date.parse((await getRun(app, runId)).phases[0].deadlines.since)
  const lastAt = (run: { phases: Array<{ decisions: Array<{ at: string }> }> }) => Date.parse(run.phases[0]!.decisions.at(-1)!.at)
  const writerTimes: number[] = []

  // 1. A quorum of two: one approved output; its tool calls of each kind.
  const r1 = await start(streamId, cycles.a)
  await answer(writerKey, undefined, true)
  let waitedFrom = await since(r1.id)
  await decide(maria, r1, 'approve')
  writerTimes.push(lastAt(await decide(tom, r1, 'approve')) - waitedFrom)
  // 2. Revise → approve: one approved output, one revision.
  const r2 = await start(streamId, cycles.a)
  await answer(writerKey)
  waitedFrom = await since(r2.id)
  writerTimes.push(lastAt(await decide(maria, r2, 'revise', { note: 'shorter' })) - waitedFrom)
  await answer(writerKey)
  waitedFrom = await since(r2.id)
  await decide(tom, r2, 'approve')
  writerTimes.push(lastAt(await decide(maria, r2, 'approve')) - waitedFrom)
  // 3. A reject by an admin outside the pool (override).
  const r3 = await start(streamId, cycles.a)
  await answer(writerKey)
  waitedFrom = await since(r3.id)
  writerTimes.push(lastAt(await decide(boss, r3, 'reject', { override: true, note: 'off-brand' })) - waitedFrom)
  // 4. An expiry that approves: expired, not approved.
  const r4 = await start(streamId, cycles.b)
  await answer(writerKey)
  const attempt = (await getRun(app, r4.id)).phases[0].deadlines.attempt
  await runClockTimer(app, { clock: 'decision', runId: r4.id, phaseRunId: r4.phases[0].id, callId: null, attempt, timer: 'expire' }, CLOCK_EFFECTS)
  assert.equal((await getRun(app, r4.id)).status, 'succeeded')
  // 5. A cancel while waiting (after one approve of two): no outcome.
  const r5 = await start(streamId, cycles.a)
  await answer(writerKey)
  await decide(maria, r5, 'approve')
  assert.equal((await send(app, 'POST', `/api/runs/${r5.id}/cancel`, {})).statusCode, 200)
  // 6. The agent fails: a failed run counted against it.
  await start(streamId, cycles.a)
  await answer(writerKey, { error: { detail: 'model refused' } })
  // 7. An auto-advancing phase: its cost is not a gated phase's.
  await start(streamId, cycles.c)
  await answer(writerKey)
  // 8. Another agent in another stream, approved at once.
  const r8 = await start(otherStreamId, cycles.d)
  await answer(reviewerKey, { output: { text: 'ok' } })
  await decide(maria, r8, 'approve')
  return { workspaceId, writerId, reviewerId, streamId, otherStreamId, cycles, phaseIds, maria, tom, boss, writerKey, writerTimes }
}

/** Tool calls of each kind on the claimed task's phase: run at once, approved, denied, failed, and a question. */
async function addToolCalls(app: FastifyInstance, workspaceId: string, payload: { run: { id: string }; phase: { id: string }; task: { id: string; attempt: number } }) {
  const at = now()
  const approval = (decision: string) => JSON.stringify({ required: true, decision, note: null, principalId: 'p', handle: 'maria', at })
  const rows: Array<[string, 'succeeded' | 'failed' | 'denied', string | null]> = [
    ['files.echo', 'succeeded', null],
    ['files.delete_file', 'succeeded', approval('approve')],
    ['files.delete_file', 'denied', approval('deny')],
    ['files.read', 'failed', null],
    ['tandem.ask_operator', 'succeeded', null],
  ]
  await app.database.db
    .insertInto('tool_calls')
    .values(rows.map(([name, status, approvalJson], position) => ({
      id: newId(), workspace_id: workspaceId, run_id: payload.run.id, phase_run_id: payload.phase.id, task_id: payload.task.id,
      attempt: payload.task.attempt, step: 1, position, model_call_id: `c${position}`, name, input: '{"secret":"s"}', output: null, error: null, status,
      approval: approvalJson, loop_state: null, dispatched_at: at, started_at: at, finished_at: at,
    })))
    .execute()
}

/** Nearest rank: sorted x₁…xₙ, pₖ = x⌈k·n/100⌉. */
export function nearestRank(values: number[], k: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.ceil((k * sorted.length) / 100) - 1]!
}
