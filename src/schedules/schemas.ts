// Schedule shapes (docs/operators.md "Schedules").
import Type, { type Static } from 'typebox'
import { Nullable, Timestamp, Uuid } from '../http/schemas.js'
import { RunInput, TriggerName } from '../triggers/schemas.js'

const Cron = Type.String({ minLength: 1, maxLength: 200, description: 'five fields (minute hour day-of-month month day-of-week), or six with seconds first' })
const Timezone = Type.String({ minLength: 1, maxLength: 100, description: 'an IANA time zone name (default UTC)' })

export const Schedule = Type.Object(
  {
    id: Uuid,
    streamId: Uuid,
    triggerName: Type.String(),
    cron: Type.String(),
    timezone: Type.String(),
    input: RunInput,
    enabled: Type.Boolean(),
    nextRunAt: Nullable(Timestamp),
    lastRunAt: Nullable(Timestamp),
    createdBy: Type.String(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Schedule' },
)
export type Schedule = Static<typeof Schedule>

export const CreateScheduleBody = Type.Object(
  { triggerName: TriggerName, cron: Cron, timezone: Type.Optional(Timezone), input: Type.Optional(RunInput), enabled: Type.Optional(Type.Boolean()) },
  { additionalProperties: false, title: 'CreateSchedule' },
)
export type CreateScheduleBody = Static<typeof CreateScheduleBody>

export const UpdateScheduleBody = Type.Object(
  { triggerName: Type.Optional(TriggerName), cron: Type.Optional(Cron), timezone: Type.Optional(Timezone), input: Type.Optional(RunInput), enabled: Type.Optional(Type.Boolean()) },
  { additionalProperties: false, title: 'UpdateSchedule' },
)
export type UpdateScheduleBody = Static<typeof UpdateScheduleBody>
