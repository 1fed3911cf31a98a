// Agent shapes (spec 2.2 and 8): the create body, the partial update body and the stored agent.
import Type, { type Static } from 'typebox'
import { Nullable, StringEnum, Timestamp, Uuid } from '../http/schemas.js'

export const PROVIDER_TYPES = ['custom_webhook', 'custom_token_only', 'claude', 'mistral', 'elevenlabs', 'copilot_studio', 'cursor'] as const
export const AUTH_MODES = ['api_key', 'direct_line', 'none'] as const

const ProviderType = StringEnum(PROVIDER_TYPES)
const AuthMode = StringEnum(AUTH_MODES)
const Name = Type.String({ minLength: 1, maxLength: 120 })
const Instructions = Type.String({ maxLength: 20000 })
const Config = Type.Object({}, { additionalProperties: true, description: 'Free-form object, stored as sent' })
const Tools = Type.Array(Type.String(), { maxItems: 50 })
const EndpointUrl = Type.String({
  format: 'uri',
  maxLength: 2048,
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^/?#\\s]+',
  description: 'an absolute http or https URL',
})

const CapabilitiesInput = Type.Object(
  { streaming: Type.Optional(Type.Boolean()), tools: Type.Optional(Tools) },
  { additionalProperties: false },
)

export const CreateAgentBody = Type.Object(
  {
    providerType: Type.Optional(ProviderType),
    authMode: Type.Optional(AuthMode),
    name: Name,
    avatarAssetId: Type.Optional(Uuid),
    credentialId: Type.Optional(Uuid),
    config: Type.Optional(Config),
    instructions: Type.Optional(Instructions),
    templateId: Type.Optional(Type.String()),
    capabilities: Type.Optional(CapabilitiesInput),
    endpointUrl: Type.Optional(EndpointUrl),
  },
  { additionalProperties: false, title: 'CreateAgent' },
)
export type CreateAgentBody = Static<typeof CreateAgentBody>

// PATCH: any subset of the create fields; `null` clears an optional field that has no default.
export const UpdateAgentBody = Type.Object(
  {
    providerType: Type.Optional(ProviderType),
    authMode: Type.Optional(Nullable(AuthMode)),
    name: Type.Optional(Name),
    avatarAssetId: Type.Optional(Nullable(Uuid)),
    credentialId: Type.Optional(Nullable(Uuid)),
    config: Type.Optional(Config),
    instructions: Type.Optional(Nullable(Instructions)),
    templateId: Type.Optional(Nullable(Type.String())),
    capabilities: Type.Optional(CapabilitiesInput),
    endpointUrl: Type.Optional(Nullable(EndpointUrl)),
  },
  { additionalProperties: false, minProperties: 1, title: 'UpdateAgent' },
)
export type UpdateAgentBody = Static<typeof UpdateAgentBody>

export const Agent = Type.Object({
  id: Uuid,
  providerType: ProviderType,
  authMode: Nullable(AuthMode),
  name: Type.String(),
  avatarAssetId: Nullable(Uuid),
  credentialId: Nullable(Uuid),
  config: Config,
  instructions: Nullable(Type.String()),
  templateId: Nullable(Type.String()),
  capabilities: Type.Object({ streaming: Type.Boolean(), tools: Type.Array(Type.String()) }),
  endpointUrl: Nullable(Type.String()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
}, { title: 'Agent' })
export type Agent = Static<typeof Agent>
