// Delivery: the jobs that move runs forward outside requests. `runs.start` begins a queued run; `runs.deliver`
// hands a task to its agent through the adapter (and, for vendors that work slowly, looks again later);
// `runs.task-timeout` fails a task nobody answered. A delivery that fails transiently is retried with
// exponential back-off and jitter from 1 s (Retry-After honoured), at most TANDEM_DISPATCH_ATTEMPTS times.
//
// On PostgreSQL several instances deliver: an instance takes a task's delivery lease (dispatch time-out + 5 s).
// If it dies mid-delivery, a live instance frees its job (src/failover/registry.ts); the job, run again, finds the
// lease held and schedules a watchdog delivery for when it ends, which delivers the task again (same task id, so
// the same webhook-id). A delivery that finds the lease held for any other reason does the same. A holder that
// ends its delivery releases the lease and, in the same transaction, replaces or removes that watchdog (on the
// locked task row, so the two never cross: runs/store.ts leaseOpenTask); a look that goes on is then due at once
// when a delivery was waiting, so a decision landing during a look is not held back by the poll's interval.
import { checkedUsage } from './usage-check.js'
import type { FastifyInstance } from 'fastify'
import type { Kysely, RawBuilder } from 'kysely'
import type { Database } from '../../db/database.js'
import { toAgent } from '../../agents/store.js'
import { addJobSql, enqueueJobs, jobWaits, removeJob, type JobSpec } from '../../jobs/index.js'
import { now } from '../../ids.js'
import { childOfStored } from '../../http/trace.js'
import { remoteTaskLedger } from '../../a2a/remote-ledger.js'
import { remoteWaits } from '../../a2a/remote-waits.js'
import type { AdapterContext, AgentOutput, AgentTarget, DeliveryOutcome, JsonObject, Usage } from '../adapters/adapter.js'
import { adapterFor } from '../adapters/index.js'
import { phaseAnswered, phaseFailed, runProblem, taskToken } from '../machine/machine.js'
import { DELIVER_TASK_JOB, TIMEOUT_JOB, deliveryKey, timeoutKey, type DeliveryJob } from '../machine/jobs.js'
import { closeTask, findDeliveryContext, findTask, leaseOpenTask, releaseTaskLease, type DeliveryContext, type TaskRow } from '../store.js'
import { buildTaskPayload, publicBase } from './payload.js'
import { withLockedRun } from '../machine/locked.js'
import { failStreamingMessage } from '../../chat/streaming.js'
import { StreamSink } from '../../chat/sink.js'
import { countTokens } from '../../metrics/tokens.js'
import { emitInsight, tracesListen } from '../../insights/events.js'
import { openAgentSecret } from './secrets.js'
import { deadline } from '../../net/deadline.js'
import { AGENT_DELIVERY_BACKOFF, backoffMs } from '../../net/backoff.js'
import type { RunProblem } from '../schemas.js'
import { prepareToolLoop } from '../tool-calls/host.js'
import { addTaskTools } from '../tool-calls/task.js'
import { prepareClientTools } from '../tool-calls/client.js'

const LEASE_MARGIN_MS = 5000

/** `streamed: false`: the agent does not stream, so no message of this task exists to complete (one read saved). */
type Settlement = { output: AgentOutput; usage?: Usage | null; streamed?: boolean } | { problem: RunProblem }

/**
 * Closes an open task and moves its phase on, in one transaction: the run is locked first, so a cancel or a
 * second answer racing with this one sees the task closed. 'closed' when the task no longer takes an answer.
 */
export async function settleTask(
  db: Kysely<Database>,
  settings: FastifyInstance['config']['runs'],
  taskId: string,
  settlement: Settlement,
  /** The task's row when the caller has read it (its run and phase never change): not read again. */
  known?: Pick<TaskRow, 'id' | 'run_id' | 'phase_run_id' | 'traceparent'>,
): Promise<'settled' | 'closed'> {
  return db.transaction().execute(async (trx) => {
    const task = known ?? (await findTask(trx, taskId))
    if (!task) return 'closed'
    const settled = await withLockedRun(trx, settings, task.run_id, null, async (t, run) => {
      // Closing the task also ends its delivery lease (lease_until null); its time-out, and any delivery still
      // waiting (a retry, a poll, the watchdog), are no longer due and go with it.
      if (!(await closeTask(trx, task.id, 'output' in settlement ? 'answered' : 'failed', now(), [timeoutKey(task.id), deliveryKey(task.id)]))) return 'closed' as const
      if ('output' in settlement) {
        if (settlement.usage) await trx.updateTable('run_tasks').set({ usage: JSON.stringify(settlement.usage) }).where('id', '=', task.id).execute()
        await phaseAnswered(t, run, task.phase_run_id, settlement.output, { taskId: task.id, usage: settlement.usage ?? null, streamed: settlement.streamed })
      } else await phaseFailed(t, run, task.phase_run_id, settlement.problem)
      return 'settled' as const
    })
    // A failed attempt, or an answer to a closed task: a message it was streaming ends `failed` with its text.
    if (settled !== 'settled' || !('output' in settlement)) await failStreamingMessage(trx, task.id, task.traceparent)
    return settled ?? 'closed'
  })
}

/**
 * The time-out of a push task, armed by its delivery once the task may stay open (the agent accepted it, a vendor
 * is polled, a delivery is retried): due TANDEM_TASK_TIMEOUT_S after the task was created, keyed by the task (so
 * arming it again replaces it) and removed when the task settles. A push task its first delivery settles (the
 * agent answers in its response) never gets one: no job row per task for nothing to time out.
 */
function timeoutJob(task: TaskRow, settings: FastifyInstance['config']['runs']): JobSpec[] {
  // None while the task's clock stands still, and later by the time it stood still (src/a2a/remote-clock.ts).
  if (task.clock_paused_at) return []
  const paused = Number(task.clock_paused_ms) || 0
  return [{ name: TIMEOUT_JOB, payload: { taskId: task.id }, options: { jobKey: timeoutKey(task.id), runAt: new Date(Date.parse(task.created_at) + settings.taskTimeoutS * 1000 + paused) } }]
}

const scrub = (detail: string, secret: string | null) => (secret && secret.length > 0 ? detail.split(secret).join('…') : detail)

/**
 * One delivery (or poll) of a task; never throws for a fault of the agent's. null: nothing to do any more.
 * `read`: what the delivery reads, when the lease's statement read it (PostgreSQL; null: the run is gone).
 */
async function attempt(
  app: FastifyInstance,
  task: TaskRow,
  job: DeliveryJob,
  shutdown: AbortSignal,
  read: DeliveryContext | null | undefined,
): Promise<{ outcome: DeliveryOutcome; secret: string | null; providerType?: string; streams?: boolean } | null> {
  const { db } = app.database
  // The run, its stream and cycle, the agent and its credential (and on PostgreSQL the stream's latest messages):
  // read with the lease on PostgreSQL, in two queries on SQLite.
  const stored = read === undefined ? await findDeliveryContext(db, task.run_id, task.workspace_id, task.agent_id) : read
  if (!stored) return null
  const { run } = stored
  const unavailable = (detail: string) => ({ outcome: { kind: 'failed', code: 'agent-unavailable', detail } as DeliveryOutcome, secret: null })
  if (!stored.agent) return unavailable(`The agent ${task.agent_id} no longer exists.`)
  const agent = toAgent(stored.agent)
  const adapter = adapterFor(agent.providerType)
  if (!adapter) return unavailable(`Agents of providerType ${agent.providerType} cannot be called by this server.`)
  let secret: string | null = null
  if (agent.credentialId) {
    if (!stored.credential) return unavailable(`The credential ${agent.credentialId} the agent names does not exist.`)
    secret = openAgentSecret(stored.credential)
  }
  const target: AgentTarget = {
    id: agent.id, name: agent.name, providerType: agent.providerType, authMode: agent.authMode, endpointUrl: agent.endpointUrl,
    config: agent.config as JsonObject, instructions: agent.instructions, secret,
  }
  const reason = adapter.unavailable(target)
  if (reason) return unavailable(`The agent cannot be called: ${reason}.`)
  const payload = await buildTaskPayload(db, {
    task, token: taskToken(app.vault, job), run, agent, base: publicBase(app),
    known: { streamName: stored.streamName ?? '', cycleDescription: stored.cycleDescription },
    ...(stored.recentMessages ? { recentMessages: stored.recentMessages } : {}),
  })
  const timeoutMs = app.config.runs.dispatchTimeoutMs
  const limit = deadline(timeoutMs, shutdown)
  const signal = limit.signal
  const client = app.egress
  // Each call is a span of its own under the task's (so a retry after a crash continues the same trace).
  const traceparent = childOfStored(task.traceparent)
  const context: AdapterContext = { fetch: client.fetch, request: client.request, lookup: client.lookup, signal, timeoutMs, ...(traceparent ? { traceparent } : {}), a2aLedger: remoteTaskLedger(db), a2aWaits: remoteWaits(db, app.config.runs) }
  // A streaming agent's deltas go into its message as they arrive (docs/streaming-and-usage.md); so do a remote A2A
  // agent's when a later look follows its task's stream again (src/a2a/client.ts).
  const sink = agent.capabilities.streaming && (!job.poll || job.poll.streaming === true)
    ? new StreamSink(db, { workspaceId: task.workspace_id, streamId: run.streamId, authorId: agent.id, taskId: task.id, traceparent: task.traceparent }, app.log)
    : null
  if (sink) context.onDelta = sink.onDelta
  // Traces on: each model call of Tandem's own loop becomes a `chat` span under the task's (docs/insights.md).
  if (tracesListen(db) && task.traceparent) {
    const ids = { providerType: agent.providerType, runId: run.id, phaseRunId: task.phase_run_id, taskId: task.id, traceparent: task.traceparent }
    context.onModelStep = (step) => void emitInsight(db, { type: 'model_step', step, ...ids })
  }
  const started = performance.now()
  try {
    // An agent with tools (claude, mistral): the adapter runs Tandem's tool loop (docs/tools-and-approvals.md).
    // A webhook or token-only agent with tools finds them in its payload (tools, toolsUrl).
    if (!job.poll) {
      const tools = await prepareToolLoop(app, { task, run, agent, job }, signal)
      if (tools) context.tools = tools
      await addTaskTools(app, payload, { task, run, agent }, signal)
      const clientTools = await prepareClientTools(app, { task, run, agent }, signal)
      if (clientTools) context.clientTools = clientTools
    }
    const outcome = job.poll && adapter.poll ? await adapter.poll(job.poll, payload, target, context) : await adapter.deliver(payload, target, context)
    if (shutdown.aborted) throw new Error('shutting down')
    app.metrics.tasks.inc({ provider: agent.providerType, outcome: outcome.kind })
    app.metrics.taskDelivery.observe({ provider: agent.providerType }, (performance.now() - started) / 1000)
    return { outcome, secret, providerType: agent.providerType, streams: agent.capabilities.streaming === true }
  } catch (error) {
    if (shutdown.aborted) throw error // not the agent's fault: the job runs again after the restart
    if ((error as Error).name === 'EgressDeniedError') return { outcome: { kind: 'failed', code: 'egress-denied', detail: (error as Error).message }, secret }
    app.log.warn({ err: error, taskId: task.id, providerType: agent.providerType }, 'adapter threw; treated as a transient failure')
    return { outcome: { kind: 'retry', detail: `the adapter failed: ${(error as Error).message}` }, secret }
  } finally {
    limit.clear()
    await sink?.finish()
  }
}

/** A task that fails its phase is logged at info (the run and chat show it too): never silent. The detail is scrubbed of the secret. */
function logTaskFailed(app: FastifyInstance, task: TaskRow, code: string, detail: string) {
  app.log.info({ runId: task.run_id, phaseRunId: task.phase_run_id, taskId: task.id, agentId: task.agent_id, problem: code }, `a task failed its phase (${code}): ${detail}`)
}

export async function deliverTask(job: DeliveryJob, app: FastifyInstance, shutdown: AbortSignal): Promise<void> {
  const { db, dialect } = app.database
  const settings = app.config.runs
  const key = deliveryKey(job.taskId)
  let task: TaskRow | undefined
  let read: DeliveryContext | null | undefined
  if (dialect === 'postgres') {
    const leaseMs = settings.dispatchTimeoutMs + LEASE_MARGIN_MS
    const at = Date.now()
    // One statement: the open task read and its lease taken, with what the delivery reads, or, when another holds
    // the lease, the watchdog added, which delivers again once that lease ends (the holder may have died).
    const watchdog = () => addJobSql(db, DELIVER_TASK_JOB, job, { jobKey: key, runAt: new Date(at + leaseMs + 100) }) as RawBuilder<unknown>
    const leased = await leaseOpenTask(db, job.taskId, new Date(at).toISOString(), new Date(at + leaseMs).toISOString(), watchdog)
    if (!leased.task || !leased.leased) return
    task = leased.task
    read = leased.context
  } else {
    task = await findTask(db, job.taskId)
    if (!task || task.state !== 'open') return
  }
  const open = task
  const result = await attempt(app, open, job, shutdown, read)
  if (!result) return
  const { outcome, secret } = result
  const done = async () => {
    if (dialect !== 'postgres') return
    await db.transaction().execute(async (trx) => {
      await releaseTaskLease(trx, open.id)
      await removeJob(trx, key)
    })
  }
  // A settled task's lease and pending delivery jobs end with it (settleTask); only a task that stays open needs done().
  const settle = async (settlement: Settlement) => {
    if ((await settleTask(db, settings, open.id, settlement, open)) === 'closed') await done()
  }
  switch (outcome.kind) {
    case 'answered': {
      const usage = checkedUsage(outcome.usage, (reported) => app.log.warn({ taskId: open.id, providerType: result.providerType, usage: reported }, 'the vendor reported token counts that are not whole numbers from 0; no usage recorded'))
      if (usage && result.providerType) countTokens(app, result.providerType, usage)
      // A retry looks too: an earlier attempt may have streamed before the agent stopped streaming.
      return settle({ output: outcome.output, usage, streamed: (result.streams ?? true) || job.dispatch > 1 })
    }
    case 'failed':
      logTaskFailed(app, open, outcome.code, scrub(outcome.detail, secret))
      return settle({ problem: runProblem(outcome.code, scrub(outcome.detail, secret)) })
    case 'accepted':
      // The agent answers later (the result route): from now on the task waits on its time-out.
      await db.transaction().execute(async (trx) => {
        if (dialect === 'postgres') {
          await releaseTaskLease(trx, open.id)
          await removeJob(trx, key)
        }
        // Unless the agent's answer came first (a task settled has no time-out to wait on).
        const current = await findTask(trx, open.id)
        if (current?.state === 'open') await enqueueJobs(trx, timeoutJob(current, settings))
      })
      return
    case 'waiting':
      // The tool loop stopped for an operator; its lease and watchdog went in the same transaction.
      return
    case 'poll':
    case 'retry': {
      if (outcome.kind === 'retry' && job.dispatch >= settings.dispatchAttempts) {
        const detail = `No delivery succeeded after ${job.dispatch} attempt${job.dispatch === 1 ? '' : 's'}; the last: ${scrub(outcome.detail, secret)}.`
        logTaskFailed(app, open, 'agent-unreachable', detail)
        return settle({ problem: runProblem('agent-unreachable', detail) })
      }
      const next: DeliveryJob =
        outcome.kind === 'poll' ? { ...job, poll: outcome.state, dispatch: 1 } : { ...job, dispatch: job.dispatch + 1 }
      const delay = outcome.kind === 'poll' ? (outcome.afterMs ?? settings.pollIntervalMs) : backoffMs(AGENT_DELIVERY_BACKOFF, next.dispatch - 1, outcome.retryAfterMs)
      await db.transaction().execute(async (trx) => {
        if (dialect === 'postgres') await releaseTaskLease(trx, open.id)
        const current = await findTask(trx, open.id)
        if (current?.state !== 'open') return
        // A delivery that came while this one ran (a decision's look; on PostgreSQL the watchdog it left, finding the
        // lease held) waits under the key: the next look, which replaces it, is due now rather than after the poll's
        // interval. A retry keeps its back-off. (A look is queued in the transaction that changes the task's row,
        // resumeClocks: so one queued as this look ends is either seen here or replaces the look queued here.)
        const waited = outcome.kind === 'poll' && (await jobWaits(trx, key))
        await enqueueJobs(trx, [...timeoutJob(current, settings), { name: DELIVER_TASK_JOB, payload: next, options: { jobKey: key, runAt: new Date(Date.now() + (waited ? 0 : delay)) } }])
      })
      return
    }
  }
}
