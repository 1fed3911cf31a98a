// Chat message shapes: spec 2.4's rich text (blocks → paragraphs → text runs) and the stored message.
import Type, { type Static } from 'typebox'
import { Nullable, StringEnum, Timestamp, Uuid } from '../http/schemas.js'

export const MAX_BLOCKS = 50
export const MAX_TEXT_LENGTH = 40000
export const MAX_PARAGRAPHS = 1000
export const MAX_RUNS = 10000

// Each level is "one of" a single variant today, discriminated by `type`; a new variant becomes a union here.
const Style = Type.Object(
  {
    bold: Type.Optional(Type.Boolean()),
    italic: Type.Optional(Type.Boolean()),
    strikethrough: Type.Optional(Type.Boolean()),
    code: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)

const TextRun = Type.Object(
  { type: Type.Literal('text'), text: Type.String(), style: Type.Optional(Style) },
  { additionalProperties: false },
)

const Paragraph = Type.Object(
  { type: Type.Literal('paragraph'), direction: Type.Optional(StringEnum(['ltr', 'rtl'])), children: Type.Array(TextRun, { maxItems: MAX_RUNS }) },
  { additionalProperties: false },
)

const RichTextBlock = Type.Object(
  { type: Type.Literal('rich_text'), elements: Type.Array(Paragraph, { maxItems: MAX_PARAGRAPHS }) },
  { additionalProperties: false },
)

export const Content = Type.Object(
  { blocks: Type.Array(RichTextBlock, { minItems: 1, maxItems: MAX_BLOCKS }) },
  { additionalProperties: false, title: 'RichText', description: `Rich text: 1 to ${MAX_BLOCKS} blocks, at most ${MAX_PARAGRAPHS} paragraphs, ${MAX_RUNS} text runs and ${MAX_TEXT_LENGTH} characters of text in all` },
)
export type Content = Static<typeof Content>
export type TextRun = Static<typeof TextRun>

export const MESSAGE_STATUSES = ['streaming', 'complete', 'failed'] as const
export type MessageStatus = (typeof MESSAGE_STATUSES)[number]

export const MessageBody = Type.Object({ content: Content }, { additionalProperties: false, title: 'MessageBody' })
export type MessageBody = Static<typeof MessageBody>

export const Message = Type.Object({
  id: Uuid,
  streamId: Uuid,
  authorId: Uuid,
  authorType: StringEnum(['principal', 'agent'], { description: 'principal: a person or key; agent: posted by a run for the agent authorId' }),
  content: Content,
  text: Type.String({ description: 'plain-text rendering of content' }),
  revision: Type.Integer({ minimum: 1 }),
  createdAt: Timestamp,
  editedAt: Nullable(Timestamp),
  status: StringEnum(MESSAGE_STATUSES, {
    description: 'streaming: an agent is writing it (message.delta events follow; it cannot be edited); complete: every other message; failed: the attempt writing it failed, the text is what had arrived',
  }),
}, { title: 'Message' })
export type Message = Static<typeof Message>

export const Revision = Type.Object({
  revision: Type.Integer({ minimum: 1 }),
  content: Content,
  text: Type.String(),
  createdAt: Timestamp,
}, { title: 'MessageRevision' })
export type Revision = Static<typeof Revision>

export const RenderQuery = Type.Object(
  { format: Type.Optional(StringEnum(['html', 'markdown', 'text'], { description: 'default html' })) },
  { additionalProperties: false },
)

export const MessageIdParams = Type.Object({ id: Uuid }, { additionalProperties: false })
