// The event of a stream, as the log, SSE and webhooks carry it.
import Type, { type Static } from 'typebox'
import { StringEnum, Timestamp, Uuid } from '../http/schemas.js'

export const EVENT_TYPES = ['message.created', 'message.edited', 'message.completed', 'cycle.saved', 'cycle.updated', 'run.created', 'run.updated', 'decision.reminder', 'decision.escalated', 'tool_call.created', 'tool_call.updated'] as const
export type EventType = (typeof EVENT_TYPES)[number]

/** An event id: the decimal position of the event in its stream, from 1. */
export const EVENT_ID_PATTERN = '^(0|[1-9][0-9]{0,14})$'

export const StreamEvent = Type.Object(
  {
    id: Type.String({ pattern: EVENT_ID_PATTERN, description: 'the position of the event in its stream (decimal, from 1, no gaps)' }),
    type: StringEnum(EVENT_TYPES),
    streamId: Uuid,
    createdAt: Timestamp,
    data: Type.Unknown({ description: 'the payload of the event type: the OpenAPI document names each under `webhooks` (e.g. `run.updated` carries a RunSummary)' }),
  },
  { title: 'StreamEvent', additionalProperties: false },
)
export type StreamEvent = Omit<Static<typeof StreamEvent>, 'type'> & { type: EventType }
