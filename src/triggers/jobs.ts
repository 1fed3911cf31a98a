// The background jobs of schedules and message triggers: their part of the service's task list (src/task-list.ts).
import type { FastifyInstance } from 'fastify'
import type { JobHandler, JobPayloads } from '../jobs/index.js'
import { fireSchedule, SCHEDULE_JOB } from '../schedules/firing.js'
import { fireMessageTriggers, MESSAGE_TRIGGER_JOB } from './message-triggers.js'

const depsOf = (app: FastifyInstance) => ({ settings: app.config.runs, log: app.log, metrics: app.metrics })

export const operatorTasks: { [K in typeof SCHEDULE_JOB | typeof MESSAGE_TRIGGER_JOB]: JobHandler<JobPayloads[K]> } = {
  [SCHEDULE_JOB]: async (payload, context) => fireSchedule({ ...depsOf(context.app), firingsPerMinute: context.app.config.operators.scheduleFiringsPerMinute }, context.app.database.db, payload),
  [MESSAGE_TRIGGER_JOB]: async (payload, context) => fireMessageTriggers(depsOf(context.app), context.app.database.db, payload),
}
