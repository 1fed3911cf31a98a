// Credential shapes. The secret goes in, never out: a credential shows its name and a hint only.
import Type, { type Static } from 'typebox'
import { Timestamp, Uuid } from '../http/schemas.js'

const Name = Type.String({ minLength: 1, maxLength: 120 })
const Secret = Type.String({ minLength: 1, maxLength: 8192, description: 'never returned; stored encrypted' })

export const CreateCredentialBody = Type.Object({ name: Name, secret: Secret }, { additionalProperties: false })
export type CreateCredentialBody = Static<typeof CreateCredentialBody>

export const UpdateCredentialBody = Type.Object(
  { name: Type.Optional(Name), secret: Type.Optional(Secret) },
  { additionalProperties: false, minProperties: 1 },
)
export type UpdateCredentialBody = Static<typeof UpdateCredentialBody>

export const Credential = Type.Object({
  id: Uuid,
  name: Type.String(),
  hint: Type.String({ description: '"…" and the secret\'s last 4 characters, or "…" alone for a secret under 12 characters' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
})
export type Credential = Static<typeof Credential>
