// Inbox shapes (docs/operators.md "The inbox").
import Type, { type Static } from 'typebox'
import { Nullable, PageQuery, StringEnum, Timestamp, Uuid } from '../http/schemas.js'

export const INBOX_KINDS = ['decision', 'tool_approval', 'question'] as const

export const InboxItem = Type.Object(
  {
    kind: StringEnum(INBOX_KINDS),
    runId: Uuid,
    phaseRunId: Uuid,
    callId: Nullable(Type.String({ description: 'the tool call or question (null for a decision)' })),
    streamId: Uuid,
    streamName: Type.String(),
    triggerName: Type.String(),
    phaseName: Type.String(),
    summary: Type.String({ maxLength: 500, description: 'the output, the tool and its input, or the question, cut to 500 characters' }),
    waitingSince: Timestamp,
    remindAt: Nullable(Timestamp),
    escalateAt: Nullable(Timestamp),
    expireAt: Nullable(Timestamp),
    escalated: Type.Boolean(),
    claimedBy: Nullable(Type.String({ description: 'the handle of whoever claimed it, while the claim lasts' })),
    approvals: Type.Object({ have: Type.Integer({ minimum: 0 }), need: Type.Integer({ minimum: 1 }) }),
  },
  { title: 'InboxItem' },
)
export type InboxItem = Static<typeof InboxItem>

/** GET /api/me/inbox: a page, narrowed to one kind, one stream, or the items the caller claimed (anything else: 400). */
export const InboxQuery = Type.Object(
  {
    ...PageQuery.properties,
    kind: Type.Optional(StringEnum(INBOX_KINDS, { description: 'only items of this kind' })),
    streamId: Type.Optional(Uuid),
    claimed: Type.Optional(StringEnum(['me'], { description: '`me`: only the items the caller has claimed' })),
  },
  { additionalProperties: false },
)

export const ClaimParams = Type.Object({ runId: Uuid, phaseRunId: Uuid }, { additionalProperties: false })
