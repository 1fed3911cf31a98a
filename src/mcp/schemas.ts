// MCP server shapes (docs/tools-and-approvals.md, "Tools"): the registry's bodies and answers, and the live tool list.
import Type, { type Static } from 'typebox'
import { Nullable, StringEnum, Timestamp, Uuid } from '../http/schemas.js'
import { EndpointUrl } from '../agents/schemas.js'

export const SERVER_NAME_PATTERN = '^[a-z][a-z0-9_-]{0,31}$'
/** Bounds of `approval`: how many globs, and how long one may be (a tool name is at most 128 characters). */
export const MAX_APPROVAL_GLOBS = 50
export const MAX_GLOB_LENGTH = 128
export const APPROVALS = ['always', 'never'] as const
export type Approval = (typeof APPROVALS)[number]

const ServerName = Type.String({
  pattern: SERVER_NAME_PATTERN,
  description: 'a lower-case letter, then up to 31 lower-case letters, digits, `_` or `-`; unique in the workspace',
})
export const ApprovalValue = StringEnum(APPROVALS)
export type ApprovalGlobs = Record<string, Approval>
export const ApprovalGlobs = Type.Unsafe<ApprovalGlobs>({
  type: 'object',
  additionalProperties: ApprovalValue,
  propertyNames: { minLength: 1, maxLength: MAX_GLOB_LENGTH },
  maxProperties: MAX_APPROVAL_GLOBS,
  title: 'McpApproval',
  description: `tool-name globs (\`*\` matches any run of characters) → "always" (an operator approves each call) or "never"; at most ${MAX_APPROVAL_GLOBS} globs of 1 to ${MAX_GLOB_LENGTH} characters. The most specific matching glob decides (see docs); no match is "never".`,
})

export const CreateMcpServerBody = Type.Object(
  { name: ServerName, url: EndpointUrl, credentialId: Type.Optional(Uuid), approval: Type.Optional(ApprovalGlobs) },
  { additionalProperties: false, title: 'CreateMcpServer' },
)
export type CreateMcpServerBody = Static<typeof CreateMcpServerBody>

export const UpdateMcpServerBody = Type.Object(
  { name: Type.Optional(ServerName), url: Type.Optional(EndpointUrl), credentialId: Type.Optional(Nullable(Uuid)), approval: Type.Optional(ApprovalGlobs) },
  { additionalProperties: false, minProperties: 1, title: 'UpdateMcpServer', description: 'Any subset of the create fields; `credentialId: null` removes the credential; `approval` replaces the globs whole.' },
)
export type UpdateMcpServerBody = Static<typeof UpdateMcpServerBody>

export const McpServer = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    url: Type.String(),
    credentialId: Nullable(Uuid),
    approval: ApprovalGlobs,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'McpServer' },
)
export type McpServer = Static<typeof McpServer>

export const McpTool = Type.Object(
  {
    name: Type.String(),
    description: Type.String({ description: 'the server\'s description of the tool; empty when it gives none' }),
    inputSchema: Type.Object({}, { additionalProperties: true, description: 'the JSON Schema of the tool\'s input, as the server gives it' }),
    approval: ApprovalValue,
  },
  { title: 'McpTool' },
)
export type McpTool = Static<typeof McpTool>

export const McpToolList = Type.Object({ data: Type.Array(McpTool) }, { title: 'McpToolList' })
