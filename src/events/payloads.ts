// What each event type carries in `data`, by name: the OpenAPI document describes every event under `webhooks`
// (OpenAPI 3.1's place for what a server sends to its subscribers) with its `data` schema, so a client
// generator types them. The log, SSE and webhooks all carry the same envelope (StreamEvent).
import Type, { type TSchema } from 'typebox'
import { Message } from '../chat/schemas.js'
import { SavedCycle } from '../cycles/schemas.js'
import { RunSummary } from '../runs/summary.js'
import { InboxItem } from '../inbox/schemas.js'
import { StringEnum } from '../http/schemas.js'
import { ToolCallSchema } from '../runs/tool-calls/schemas.js'
import { Timestamp, Uuid } from '../http/schemas.js'
import { EVENT_ID_PATTERN, type EventType } from './schemas.js'

export const EVENT_PAYLOADS = {
  'message.created': Message,
  'message.edited': Message,
  // The end of a streamed message (docs/streaming-and-usage.md): status complete, or failed.
  'message.completed': Message,
  'cycle.saved': SavedCycle,
  'cycle.updated': SavedCycle,
  'run.created': RunSummary,
  'run.updated': RunSummary,
  'decision.reminder': InboxItem,
  'decision.escalated': Type.Object(
    { ...InboxItem.properties, reason: StringEnum(['timer', 'no-pool'], { description: 'timer: escalateAfter ran out; no-pool: no principal of the workspace has a handle of the phase\'s operatorPool' }) },
    { title: 'EscalatedInboxItem' },
  ),
  'tool_call.created': ToolCallSchema,
  'tool_call.updated': ToolCallSchema,
} satisfies Record<EventType, TSchema>

const titleOf = (type: string) => `${type.split(/[._]/).map((w) => w[0]!.toUpperCase() + w.slice(1)).join('')}Event`

/** One event type's envelope: `type` fixed, `data` its payload (e.g. `RunUpdatedEvent`). */
export function eventSchema(type: EventType): TSchema {
  return Type.Object(
    {
      id: Type.String({ pattern: EVENT_ID_PATTERN }),
      type: Type.Literal(type),
      streamId: Uuid,
      createdAt: Timestamp,
      data: EVENT_PAYLOADS[type],
    },
    { title: titleOf(type), additionalProperties: false },
  )
}

/** The OpenAPI `webhooks` object: one operation per event type, as a webhook delivery (or an SSE `data:` line) carries it. */
export function eventWebhooks(): Record<string, unknown> {
  return Object.fromEntries(
    (Object.keys(EVENT_PAYLOADS) as EventType[]).map((type) => [
      type,
      {
        post: {
          operationId: titleOf(type).replace(/^./, (c) => c.toLowerCase()),
          summary: `The ${type} event`,
          description: 'Sent to webhooks subscribed to this type (signed, see docs/runs-and-events.md), as an SSE frame of GET /api/streams/{streamId}/events, and listed by the event log.',
          requestBody: { content: { 'application/json': { schema: eventSchema(type) } } },
          responses: { '2XX': { description: 'received' } },
        },
      },
    ]),
  )
}
