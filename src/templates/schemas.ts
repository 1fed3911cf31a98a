// Agent template shapes (docs/agents-templates-assets.md, "Templates"): a template's `agent` takes any agent field but `name` (and
// `templateId`: a template does not name another), with the agent's own bounds; workspace template ids are slugs.
import Type, { type Static } from 'typebox'
import { Nullable, Timestamp, Uuid } from '../http/schemas.js'
import { Name } from '../http/names.js'
import { AuthMode, CapabilitiesInput, Config, EndpointUrl, Instructions, ProviderType } from '../agents/schemas.js'

export const MAX_SLUG_LENGTH = 64
export const MAX_DESCRIPTION_LENGTH = 2000
export const SLUG_PATTERN = `^[a-z0-9](?:[a-z0-9-]{0,${MAX_SLUG_LENGTH - 2}}[a-z0-9])?$`

const Slug = Type.String({
  pattern: SLUG_PATTERN,
  maxLength: MAX_SLUG_LENGTH,
  description: `a slug: 1 to ${MAX_SLUG_LENGTH} lower-case letters, digits and hyphens, not starting or ending with a hyphen`,
})
const TemplateIdParam = Type.String({
  pattern: `^(?:builtin:)?[a-z0-9](?:[a-z0-9-]{0,${MAX_SLUG_LENGTH - 2}}[a-z0-9])?$`,
  description: 'a template id: `builtin:<slug>` or a workspace template\'s slug',
})
const Description = Type.String({ maxLength: MAX_DESCRIPTION_LENGTH })

export const TemplateAgent = Type.Object(
  {
    providerType: Type.Optional(ProviderType),
    authMode: Type.Optional(AuthMode),
    avatarAssetId: Type.Optional(Uuid),
    credentialId: Type.Optional(Uuid),
    config: Type.Optional(Config),
    instructions: Type.Optional(Instructions),
    capabilities: Type.Optional(CapabilitiesInput),
    endpointUrl: Type.Optional(EndpointUrl),
  },
  { additionalProperties: false, title: 'TemplateAgent', description: 'any agent field but name and templateId; what an agent created from the template gets where its request is silent' },
)
export type TemplateAgent = Static<typeof TemplateAgent>

export const CreateTemplateBody = Type.Object(
  { id: Slug, name: Name, description: Description, agent: TemplateAgent },
  { additionalProperties: false, title: 'CreateAgentTemplate' },
)
export type CreateTemplateBody = Static<typeof CreateTemplateBody>

export const UpdateTemplateBody = Type.Object(
  { name: Type.Optional(Name), description: Type.Optional(Description), agent: Type.Optional(TemplateAgent) },
  { additionalProperties: false, minProperties: 1, title: 'UpdateAgentTemplate' },
)
export type UpdateTemplateBody = Static<typeof UpdateTemplateBody>

export const TemplateParams = Type.Object({ id: TemplateIdParam }, { additionalProperties: false })

export const AgentTemplate = Type.Object(
  {
    id: Type.String({ description: '`builtin:<slug>` for a built-in template, else the workspace template\'s slug' }),
    name: Type.String(),
    description: Type.String(),
    builtin: Type.Boolean(),
    agent: TemplateAgent,
    createdAt: Nullable(Timestamp),
    updatedAt: Nullable(Timestamp),
  },
  { title: 'AgentTemplate' },
)
export type AgentTemplate = Static<typeof AgentTemplate>
