// Agent shapes (spec 2.2 and 8): the create body, the partial update body and the stored agent.
import Type, { type Static } from 'typebox'
import { Nullable, StringEnum, Timestamp, Uuid } from '../http/schemas.js'
import { Name } from '../http/names.js'
import { PROVIDER_TYPES } from '../runs/adapters/provider-types.js'

export const AUTH_MODES = ['api_key', 'direct_line', 'none'] as const

export const ProviderType = StringEnum(PROVIDER_TYPES)
export const AuthMode = StringEnum(AUTH_MODES)
export const Instructions = Type.String({ maxLength: 20000 })
export const MAX_CONFIG_BYTES = 64 * 1024
export const MAX_TOOL_NAME_LENGTH = 128
export const MAX_TEMPLATE_ID_LENGTH = 256

// The size bound is a keyword of our validator (src/http/validation.ts): JSON Schema cannot say it.
export const Config = Type.Object({}, {
  additionalProperties: true,
  'x-max-serialized-bytes': MAX_CONFIG_BYTES,
  description: `Free-form object, stored as sent; at most ${MAX_CONFIG_BYTES} bytes as JSON (UTF-8)`,
})
export const Tools = Type.Array(Type.String({ maxLength: MAX_TOOL_NAME_LENGTH }), { maxItems: 50 })
const TemplateId = Type.String({ maxLength: MAX_TEMPLATE_ID_LENGTH })
export const EndpointUrl = Type.String({
  format: 'uri',
  maxLength: 2048,
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^/?#\\s]+',
  description: 'an absolute http or https URL',
})

export const CapabilitiesInput = Type.Object(
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
    templateId: Type.Optional(TemplateId),
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
    templateId: Type.Optional(Nullable(TemplateId)),
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
