// The tool call as the API and the `tool_call.*` events show it (docs/tools-and-approvals.md, "Tools").
import Type from 'typebox'
import { Nullable, StringEnum, Timestamp, Uuid } from '../../http/schemas.js'
import { VIAS } from '../../http/via.js'
import { LISTED_OUTPUT_CHARS } from '../limits.js'

export const ToolCallSchema = Type.Object(
  {
    id: Uuid,
    runId: Uuid,
    phaseRunId: Uuid,
    attempt: Type.Integer({ minimum: 1 }),
    name: Type.String({ description: '`tandem.<tool>` or `<server>.<tool>`; for a tool the model named that was never offered, the name it used' }),
    input: Type.Unknown({ description: 'the input the model gave (a JSON object)' }),
    output: Nullable(Type.String({ description: `what the tool returned, cut at ${LISTED_OUTPUT_CHARS} characters here (the model receives up to 64 KiB)` })),
    error: Nullable(Type.String({ description: 'why the call failed, or who denied it and why' })),
    status: StringEnum(['running', 'awaiting_approval', 'succeeded', 'failed', 'denied']),
    approval: Nullable(
      Type.Object({
        required: Type.Literal(true),
        decision: Nullable(StringEnum(['approve', 'deny'])),
        note: Nullable(Type.String()),
        principalId: Nullable(Type.String()),
        handle: Nullable(Type.String()),
        at: Nullable(Timestamp),
        via: Type.Optional(StringEnum(VIAS, { description: 'how a person\'s decision came: `console`, `mcp`, else `api`; absent on the system\'s' })),
      }, { description: 'set on calls whose MCP server\'s `approval` globs say "always"' }),
    ),
    answeredBy: Nullable(
      Type.Object({ principalId: Type.String(), handle: Nullable(Type.String()), at: Timestamp, via: StringEnum(VIAS) }, { description: 'who answered the question (`tandem.ask_operator`) and how; null until answered, and on other calls' }),
    ),
    startedAt: Timestamp,
    finishedAt: Nullable(Timestamp),
  },
  { title: 'ToolCall' },
)

