// Stream shapes: a named place where agents and operators work together.
import Type, { type Static } from 'typebox'
import { Nullable, Timestamp, Uuid } from '../http/schemas.js'

export const CreateStreamBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 120 }),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: false, title: 'CreateStream' },
)
export type CreateStreamBody = Static<typeof CreateStreamBody>

export const Stream = Type.Object({
  id: Uuid,
  name: Type.String(),
  description: Nullable(Type.String()),
  createdAt: Timestamp,
}, { title: 'Stream' })
export type Stream = Static<typeof Stream>

export const StreamIdParams = Type.Object({ streamId: Uuid }, { additionalProperties: false })
