// What a job handler is, and the typed names of the service's jobs (see index.ts for the API). Handlers are
// not registered by importing a module: app.ts hands the runners one explicit task list (src/task-list.ts).
//
// Each feature names its own jobs, by declaration merging (graphile-worker's `Tasks` interface does the same):
//
//   declare module '../jobs/registry.js' {
//     interface JobPayloads { 'schedules.fire': ScheduleJob }
//   }
//
// next to the job's name and payload (src/runs/machine/jobs.ts, src/schedules/firing.ts, …), so this file imports none.
import type { FastifyInstance } from 'fastify'

export interface JobContext {
  app: FastifyInstance
  /** 1 on the first run of the job. */
  attempt: number
  jobKey: string | null
  /** Aborted when the process shuts down: stop and throw, the job runs again later. */
  signal: AbortSignal
}

/** Every job of the service by name, with its payload: the features add theirs (see above). */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface JobPayloads {}

export type JobName = keyof JobPayloads

/** A handler; throwing retries the job with back-off, so a handler must be safe to run again. */
export type JobHandler<P = never> = (payload: P, context: JobContext) => Promise<void>

/** The service's task list: one handler per job name, each typed by its payload (graphile-worker's taskList). */
export type TaskList = { [K in JobName]: JobHandler<JobPayloads[K]> }

/** The runners' view of a task list (payloads are JSON read back from the queue); tests may add their own jobs. */
export type AnyTaskList = Record<string, JobHandler<never>>
