// The background jobs of schedules and message triggers: plain functions with typed payloads, declared in this
// one task list and registered once by buildApp (registerOperatorJobs), so they can join the engine's list.
import type { FastifyInstance } from 'fastify'
import { registerJobHandler, type JobContext } from '../jobs/index.js'
import { fireSchedule, SCHEDULE_JOB, type ScheduleJob } from '../schedules/firing.js'
import { fireMessageTriggers, MESSAGE_TRIGGER_JOB, type MessageTriggerJob } from './message-triggers.js'

const depsOf = (app: FastifyInstance) => ({ settings: app.config.runs })

export const operatorTasks = {
  [SCHEDULE_JOB]: (payload: ScheduleJob, context: JobContext) => fireSchedule(depsOf(context.app), context.app.database.db, payload),
  [MESSAGE_TRIGGER_JOB]: (payload: MessageTriggerJob, context: JobContext) => fireMessageTriggers(depsOf(context.app), context.app.database.db, payload),
}

export function registerOperatorJobs(): void {
  for (const [name, task] of Object.entries(operatorTasks)) registerJobHandler(name, task)
}
