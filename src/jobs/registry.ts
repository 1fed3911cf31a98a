// What a job handler is, and the typed names of the service's jobs (see index.ts for the API). Handlers are
// not registered by importing a module: app.ts hands the runners one explicit task list (src/task-list.ts).
import type { FastifyInstance } from 'fastify'
import type { DeliveryJob } from '../runs/jobs.js'
import type { ScheduleJob } from '../schedules/firing.js'
import type { MessageTriggerJob } from '../triggers/message-triggers.js'
import type { ClockJob } from '../waits/clock.js'

export interface JobContext {
  app: FastifyInstance
  /** 1 on the first run of the job. */
  attempt: number
  jobKey: string | null
  /** Aborted when the process shuts down: stop and throw, the job runs again later. */
  signal: AbortSignal
}

/** Every job of the service by name, with its payload. */
export interface JobPayloads {
  'runs.start': { runId: string }
  'runs.deliver': DeliveryJob
  'runs.task-timeout': { taskId: string }
  'webhook.deliver': { deliveryId: string }
  'schedules.fire': ScheduleJob
  'triggers.message': MessageTriggerJob
  /** a decision clock's timer (remind, escalate, expire), keyed `decision:<phaseRunId>:<attempt>:<timer>` */
  'decision.timer': ClockJob
  'tools.call': { callId: string }
}

export type JobName = keyof JobPayloads

/** A handler; throwing retries the job with back-off, so a handler must be safe to run again. */
export type JobHandler<P = never> = (payload: P, context: JobContext) => Promise<void>

/** The service's task list: one handler per job name, each typed by its payload (graphile-worker's taskList). */
export type TaskList = { [K in JobName]: JobHandler<JobPayloads[K]> }

/** The runners' view of a task list (payloads are JSON read back from the queue); tests may add their own jobs. */
export type AnyTaskList = Record<string, JobHandler<never>>
