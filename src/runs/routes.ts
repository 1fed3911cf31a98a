// /api runs: start (by hand or by trigger), list, read, cancel, decide; and the agents' claim of tasks.
// Handlers validate, call one service function (service.ts) inside reply.withTransaction, and answer.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import Type from 'typebox'
import { Page, ProblemResponses } from '../http/schemas.js'
import { decodeCursor, toPage } from '../http/pagination.js'
import { AppError, notFound } from '../http/problem.js'
import { traceparentFor } from '../http/trace.js'
import { viaOf } from '../http/via.js'
import { StreamIdParams } from '../streams/schemas.js'
import { requireStream } from '../streams/store.js'
import { CycleParams } from '../cycles/schemas.js'
import { hashToken, newToken } from './machine/machine.js'
import { claimOldestTask, findRun, listRuns } from './store.js'
import { cancel, checkRunInput, decidePhase, fireTrigger, retryRun, startRun, type Actor, type Caller } from './service.js'
import { MAX_RUNS_PER_TRIGGER, MAX_WAIT_SECONDS } from './limits.js'
import { buildTaskPayload, publicBase } from './tasks/payload.js'
import { addTaskTools } from './tool-calls/task.js'
import { findAgent } from '../agents/store.js'
import {
  ClaimBody, DecisionBody, DecisionParams, Run, RunIdParams, RunsQuery, StartRunBody, TaskPayloadSchema, TriggerParams, TriggerResult,
} from './schemas.js'

// Agent keys are refused by authentication on every route here but the claim (`config.agentKeys`).

const actorOf = (request: FastifyRequest): Actor => ({
  workspaceId: request.principal.workspaceId,
  principalId: request.principal.principalId,
  traceparent: traceparentFor(request),
})
const callerOf = (request: FastifyRequest): Actor & Caller => ({ ...actorOf(request), role: request.principal.role, handle: request.principal.handle })

export const runRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.database
  const settings = app.config.runs

  app.post(
    '/cycles/streams/:streamId/cycles/:cycleId/runs',
    {
      config: { idempotent: true },
      schema: {
        operationId: 'startRun',
        tags: ['runs'],
        summary: 'Start a run of a saved cycle',
        description: 'The run starts `queued` and begins its first phase at once; it copies the cycle\'s phases. Honours `Idempotency-Key`.',
        params: CycleParams,
        body: StartRunBody,
        response: { 201: Run, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      reply.code(201)
      const run = await reply.withTransaction(async (trx) => {
        const started = await startRun({ settings }, trx, actorOf(request), {
          streamId: request.params.streamId,
          cycleId: request.params.cycleId.toLowerCase(),
          input: checkRunInput((request.body.input ?? {}) as Record<string, unknown>),
        })
        reply.header('location', `/api/runs/${started.id}`)
        return started
      })
      return reply.send(run)
    },
  )

  app.post(
    '/streams/:streamId/triggers/:triggerName',
    {
      config: { idempotent: true },
      schema: {
        operationId: 'fireTrigger',
        tags: ['runs'],
        summary: 'Start a run of every saved cycle of the stream with this trigger name',
        description:
          `Trigger names compare case-insensitively; none matching gives \`{ "runs": [] }\`. Starts at most ${MAX_RUNS_PER_TRIGGER} runs: with more matching cycles ` +
          'none is started and the answer is 409 `too-many-runs`. The answer carries each run\'s id and status. Honours `Idempotency-Key`.',
        params: TriggerParams,
        body: StartRunBody,
        response: { 202: TriggerResult, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      reply.code(202)
      const answer = await reply.withTransaction((trx) =>
        fireTrigger({ settings }, trx, actorOf(request), {
          streamId: request.params.streamId,
          triggerName: request.params.triggerName,
          input: checkRunInput((request.body.input ?? {}) as Record<string, unknown>),
        }),
      )
      return reply.send(answer)
    },
  )

  app.get(
    '/cycles/streams/:streamId/runs',
    {
      schema: {
        operationId: 'listRuns',
        tags: ['runs'],
        summary: 'List the runs of a stream, oldest first (`order=desc`: newest first)',
        params: StreamIdParams,
        querystring: RunsQuery,
        response: { 200: Page(Run), ...ProblemResponses },
      },
    },
    async (request) => {
      const { workspaceId } = request.principal
      const stream = await requireStream(db, workspaceId, request.params.streamId)
      const limit = request.query.limit ?? 50
      const runs = await listRuns(db, workspaceId, stream.id, { status: request.query.status, limit: limit + 1, after: decodeCursor(request.query.cursor), desc: request.query.order === 'desc' })
      return toPage(runs, limit)
    },
  )

  app.get(
    '/runs/:runId',
    { schema: { operationId: 'getRun', tags: ['runs'], summary: 'Read a run', params: RunIdParams, response: { 200: Run, ...ProblemResponses } } },
    async (request) => {
      const run = await findRun(db, request.principal.workspaceId, request.params.runId.toLowerCase())
      if (!run) throw notFound('Run')
      return run
    },
  )

  app.post(
    '/runs/:runId/cancel',
    {
      schema: {
        operationId: 'cancelRun',
        tags: ['runs'],
        summary: 'Cancel a run',
        description:
          'Ends the run and every unfinished phase (`canceled`); tasks still out are closed, and a late answer to them is a 409 `task-closed`. ' +
          'Who may cancel: the principal who started the run, the operatorPool of a phase it waits on (as for deciding), or an admin; anyone else 403.',
        params: RunIdParams,
        response: { 200: Run, ...ProblemResponses },
      },
    },
    async (request, reply) => reply.withTransaction((trx) => cancel({ settings }, trx, callerOf(request), request.params.runId.toLowerCase())),
  )

  app.post(
    '/runs/:runId/retry',
    {
      config: { idempotent: true },
      schema: {
        operationId: 'retryRun',
        tags: ['runs'],
        summary: 'Retry a failed or canceled run',
        description:
          'A new run of the same stream, cycle, trigger name, `input` and `depth`, with the phases and policy the retried run had, `trigger: { kind: "manual", id: null }`, ' +
          'started by the caller; it carries `retryOf`, and the retried run `retriedBy` (set in the same transaction). A run is retried once: again is a 409 `already-retried` naming `retriedBy`; ' +
          'a run that is neither failed nor canceled is a 409 `run-not-retryable`. No body, or `{}`. Honours `Idempotency-Key`.',
        params: RunIdParams,
        response: { 201: Run, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const body = request.body as unknown
      if (body !== undefined && body !== null && (typeof body !== 'object' || Array.isArray(body) || Object.keys(body).length > 0)) {
        const keys = typeof body === 'object' && !Array.isArray(body) ? Object.keys(body) : []
        throw new AppError('validation-error', 'The body must be empty or {}.', keys.length > 0 ? keys.map((key) => ({ pointer: `/${key}`, detail: 'is not an allowed property' })) : [{ pointer: '', detail: 'must be an empty object' }])
      }
      reply.code(201)
      const run = await reply.withTransaction(async (trx) => {
        const retried = await retryRun({ settings }, trx, actorOf(request), request.params.runId.toLowerCase())
        reply.header('location', `/api/runs/${retried.id}`)
        return retried
      })
      return reply.send(run)
    },
  )

  app.post(
    '/runs/:runId/phases/:phaseRunId/decision',
    {
      schema: {
        operationId: 'decidePhase',
        tags: ['runs'],
        summary: 'Approve, revise or reject a phase awaiting a decision',
        description:
          'Who decides: a principal whose handle is in the phase\'s operatorPool; with an empty pool, any admin or member. ' +
          'An admin outside the pool may decide with `override: true` (recorded on the decision as `override: true`); `override` from a non-admin is a 403. ' +
          '`revise` needs a `note` (422 without) and is refused on people\'s work (nil agent).',
        params: DecisionParams,
        body: DecisionBody,
        response: { 200: Run, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const caller = { ...request.principal, via: viaOf(request) }
      return reply.withTransaction((trx) =>
        decidePhase({ settings }, trx, caller, {
          runId: request.params.runId.toLowerCase(),
          phaseRunId: request.params.phaseRunId.toLowerCase(),
          decision: request.body.decision,
          note: request.body.note ?? null,
          override: request.body.override === true,
        }),
      )
    },
  )

  app.post(
    '/tasks/claim',
    {
      config: { agentKeys: true },
      schema: {
        operationId: 'claimTask',
        tags: ['tasks'],
        summary: 'Claim the oldest open task of the calling agent (agent keys only)',
        description: `Waits up to \`waitSeconds\` (0–${MAX_WAIT_SECONDS}, default 0) for a task; 204 when none arrives. A claimed task is leased for TANDEM_TASK_LEASE_S (${settings.taskLeaseS} s here); unanswered by then it can be claimed again, with a new token.`,
        body: Type.Optional(ClaimBody),
        response: { 200: TaskPayloadSchema, 204: Type.Null(), ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const caller = request.principal
      if (caller.role !== 'agent' || caller.agentId === null) throw new AppError('forbidden', 'Only an agent key may claim tasks.')
      const agentId = caller.agentId
      const { workspaceId } = request.principal
      const waitSeconds = request.body?.waitSeconds ?? 0
      const deadline = Date.now() + waitSeconds * 1000
      // A long poll holds a connection: it takes a fair share of the slots (src/http/rate-limit-slots.ts).
      const release = waitSeconds > 0 ? app.heldRequests.take(caller.principalId, request.ip) : undefined
      try {
        return await claimUntil(deadline)
      } finally {
        release?.()
      }
      async function claimUntil(deadline: number) {
        for (;;) {
          const token = newToken()
          const at = new Date()
          const task = await claimOldestTask(db, agentId, workspaceId, at.toISOString(), new Date(at.getTime() + settings.taskLeaseS * 1000).toISOString(), hashToken(token))
          if (task) {
            const [run, agent] = await Promise.all([findRun(db, workspaceId, task.run_id), findAgent(db, workspaceId, agentId)])
            if (run && agent) {
              const payload = await buildTaskPayload(db, { task, token, run, agent, base: publicBase(app) })
              await addTaskTools(app, payload, { task, run, agent })
              return payload
            }
          }
          if (Date.now() >= deadline || request.raw.destroyed) return reply.code(204).send(null)
          await new Promise((resolve) => setTimeout(resolve, Math.min(CLAIM_POLL_MS, Math.max(deadline - Date.now(), 0))))
        }
      }
    },
  )
}

// A long-polling claim looks for a new task this often (claims are rare; one indexed query each time).
const CLAIM_POLL_MS = 250
