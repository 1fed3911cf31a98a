// Webhook subscription and delivery shapes (docs/runs-and-events.md "Webhook subscriptions").
import Type, { type Static } from 'typebox'
import { Nullable, StringEnum, Timestamp, Uuid } from '../../http/schemas.js'
import { EVENT_ID_PATTERN, EVENT_TYPES } from '../schemas.js'

export const WEBHOOK_EVENT_FILTERS = ['*', ...EVENT_TYPES] as const

const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  pattern: '^[hH][tT][tT][pP][sS]?://[^\\s]+$',
  description: 'an absolute http or https URL (at most 2048 characters)',
})
const Events = Type.Array(StringEnum(WEBHOOK_EVENT_FILTERS), {
  minItems: 1,
  maxItems: WEBHOOK_EVENT_FILTERS.length,
  uniqueItems: true,
  description: 'the event types to deliver, or ["*"] for all',
})
const Description = Nullable(Type.String({ maxLength: 500 }))

export const CreateWebhookBody = Type.Object(
  { url: Url, events: Events, streamId: Type.Optional(Nullable(Uuid)), description: Type.Optional(Description) },
  { additionalProperties: false, title: 'CreateWebhook' },
)
export type CreateWebhookBody = Static<typeof CreateWebhookBody>

export const UpdateWebhookBody = Type.Object(
  { url: Type.Optional(Url), events: Type.Optional(Events), enabled: Type.Optional(Type.Boolean()), description: Type.Optional(Description) },
  { additionalProperties: false, minProperties: 1, title: 'UpdateWebhook' },
)
export type UpdateWebhookBody = Static<typeof UpdateWebhookBody>

export const Webhook = Type.Object(
  {
    id: Uuid,
    url: Type.String(),
    events: Type.Array(Type.String()),
    streamId: Nullable(Uuid),
    description: Nullable(Type.String()),
    enabled: Type.Boolean(),
    disabledReason: Nullable(Type.String()),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Webhook' },
)
export type Webhook = Static<typeof Webhook>

export const WebhookWithSecret = Type.Object(
  { ...Webhook.properties, secret: Type.String({ description: 'whsec_…: the signing secret, shown only in this response' }) },
  { title: 'WebhookWithSecret' },
)
export type WebhookWithSecret = Static<typeof WebhookWithSecret>

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const

export const WebhookDelivery = Type.Object(
  {
    id: Uuid,
    eventId: Type.String({ pattern: EVENT_ID_PATTERN }),
    streamId: Uuid,
    type: Type.String(),
    status: StringEnum(DELIVERY_STATUSES),
    attempts: Type.Integer(),
    lastStatus: Nullable(Type.Integer()),
    lastError: Nullable(Type.String()),
    nextAttemptAt: Nullable(Timestamp),
    createdAt: Timestamp,
  },
  { title: 'WebhookDelivery' },
)
export type WebhookDelivery = Static<typeof WebhookDelivery>

