// Run shapes (docs/runs-and-events.md "Runs" and "Tasks"): the run with its phases, the requests that start and steer runs,
// and the task answer and claim bodies.
import { VIAS } from '../http/via.js'
import Type, { type Static } from 'typebox'
import { Content } from '../chat/schemas.js'
import { Nullable, PageQuery, StringEnum, Timestamp, Uuid } from '../http/schemas.js'
import { PhasePolicy } from '../cycles/policy.js'
import { MAX_DETAIL_LENGTH, MAX_NOTE_LENGTH, MAX_OUTPUT_TEXT_LENGTH, MAX_RUNS_PER_TRIGGER, MAX_TOKEN_COUNT, MAX_TRIGGER_NAME_LENGTH, MAX_WAIT_SECONDS } from './limits.js'

export const RUN_STATUSES = ['queued', 'running', 'waiting', 'succeeded', 'failed', 'rejected', 'canceled'] as const
export const PHASE_STATUSES = ['pending', 'running', 'awaiting_decision', 'awaiting_tool_approval', 'awaiting_input', 'succeeded', 'failed', 'canceled'] as const
export const FINISHED_RUN_STATUSES: ReadonlyArray<RunStatus> = ['succeeded', 'failed', 'rejected', 'canceled']
export type RunStatus = (typeof RUN_STATUSES)[number]
export type PhaseStatus = (typeof PHASE_STATUSES)[number]

/** Where a phase or a tool call stands, as a problem's detail says it to a person ("has succeeded", not "is succeeded"). */
export function statusInWords(status: PhaseStatus | 'awaiting_approval' | 'denied'): string {
  const words: Record<typeof status, string> = {
    pending: 'has not started',
    running: 'is running',
    awaiting_decision: 'is awaiting a decision',
    awaiting_tool_approval: 'is awaiting a tool approval',
    awaiting_input: 'is awaiting an answer',
    awaiting_approval: 'is awaiting an approval',
    succeeded: 'has succeeded',
    failed: 'has failed',
    denied: 'was denied',
    canceled: 'was canceled',
  }
  return words[status]
}

const JsonObject = Type.Object({}, { additionalProperties: true, description: 'any JSON object' })

export const Usage = Type.Object(
  { inputTokens: Type.Integer({ minimum: 0, maximum: MAX_TOKEN_COUNT }), outputTokens: Type.Integer({ minimum: 0, maximum: MAX_TOKEN_COUNT }) },
  { title: 'Usage', description: 'tokens the vendor reported (summed over tool steps, attempts, phases); null when none reported' },
)
export type Usage = Static<typeof Usage>
const UsageFields = {
  usage: Type.Optional(Nullable(Usage)),
  costUsd: Type.Optional(Nullable(Type.Number({ minimum: 0, description: 'USD from the agent\'s config.pricing ({ inputPerMTok, outputPerMTok }); null without pricing' }))),
}

export const RunProblem = Type.Object(
  { type: Type.String(), title: Type.String(), status: Type.Integer(), detail: Type.String() },
  { title: 'RunProblem', description: 'why a phase or run failed (RFC 9457 problem details)' },
)
export type RunProblem = Static<typeof RunProblem>

export const Decision = Type.Object(
  {
    decision: StringEnum(['approve', 'revise', 'reject', 'fail'], { description: 'fail: only the system, at expiry with onExpire fail' }),
    note: Nullable(Type.String()),
    principalId: Type.String({ description: 'the principal; `system` for a decision made at expiry' }),
    handle: Nullable(Type.String()),
    at: Timestamp,
    override: Type.Optional(Type.Literal(true, { description: 'present when an admin outside the phase\'s operatorPool decided it with `override: true`' })),
    expired: Type.Optional(Type.Literal(true, { description: 'present on the decision the system made when the phase\'s expireAfter ran out (handle `system`)' })),
    via: Type.Optional(StringEnum(VIAS, { description: 'how a person\'s decision came: `console`, `mcp`, `a2a`, else `api`; absent on the system\'s' })),
  },
  { title: 'RunDecision' },
)

export const Approvals = Type.Object(
  { have: Type.Integer({ minimum: 0 }), need: Type.Integer({ minimum: 1 }) },
  { title: 'Approvals', description: 'approves by distinct principals since the phase last began waiting, and the quorum it needs' },
)

export const Deadlines = Type.Object(
  {
    since: Timestamp,
    attempt: Type.Integer({ minimum: 0, description: 'the phase attempt the timers belong to (their jobs are keyed by it)' }),
    remindAt: Nullable(Timestamp),
    escalateAt: Nullable(Timestamp),
    expireAt: Nullable(Timestamp),
  },
  { title: 'DecisionDeadlines', description: 'while the phase awaits a decision: when it began waiting and when its policy\'s timers are due (null: none)' },
)

export const ToolWait = Type.Object(
  {
    callId: Uuid,
    kind: StringEnum(['tool_approval', 'question']),
    since: Timestamp,
    attempt: Type.Integer({ minimum: 0, description: 'the phase attempt (task) the call belongs to' }),
    remindAt: Nullable(Timestamp),
    escalateAt: Nullable(Timestamp),
    expireAt: Nullable(Timestamp),
    escalated: Type.Boolean({ description: 'admins may act on this call as if in the phase\'s pool' }),
  },
  { title: 'ToolWait', description: 'a tool call awaiting an approval, or a question awaiting an answer, on the phase\'s decision clock (docs/operators.md)' },
)
export type ToolWait = Static<typeof ToolWait>

export const PhaseRun = Type.Object(
  {
    id: Uuid,
    phaseId: Uuid,
    index: Type.Integer({ minimum: 0 }),
    phaseName: Type.String(),
    agentId: Uuid,
    goal: Type.String(),
    instructions: Type.String(),
    autoAdvance: Type.Boolean(),
    operatorPool: Type.Array(Type.String()),
    status: StringEnum(PHASE_STATUSES),
    attempts: Type.Integer({ minimum: 0, description: 'tasks handed to the agent so far (0 for people\'s work)' }),
    output: Nullable(Type.Object({ messageId: Uuid, text: Type.String() })),
    error: Nullable(RunProblem),
    decisions: Type.Array(Decision),
    warnings: Type.Optional(Type.Array(Type.String(), { description: 'what the run engine ignored in the phase, e.g. a `capabilities.tools` entry that names no tool (docs/tools-and-approvals.md)' })),
    startedAt: Nullable(Timestamp),
    finishedAt: Nullable(Timestamp),
    ...UsageFields,
    // Decision policies (docs/operators.md); absent on runs from before them.
    policy: Type.Optional(PhasePolicy),
    approvals: Type.Optional(Approvals),
    deadlines: Type.Optional(Nullable(Deadlines)),
    escalated: Type.Optional(Type.Boolean({ description: 'the phase\'s decision was escalated: admins may decide it as if in its pool' })),
    toolWaits: Type.Optional(Type.Array(ToolWait, { description: 'while the phase is awaiting_tool_approval or awaiting_input: the waiting calls\' clocks' })),
  },
  { title: 'PhaseRun' },
)
export type PhaseRun = Static<typeof PhaseRun>

export const TRIGGER_KINDS = ['manual', 'schedule', 'message', 'hook', 'a2a'] as const
/** What started a run (docs/operators.md): `id` is the schedule's, message trigger's or hook's; null for manual. */
export const RunTrigger = Type.Object(
  { kind: StringEnum(TRIGGER_KINDS), id: Nullable(Uuid) },
  { title: 'RunTrigger', description: 'what started the run: by hand (or POST …/triggers), a schedule, a message trigger or an inbound hook' },
)
export type RunTrigger = Static<typeof RunTrigger>

export const Run = Type.Object(
  {
    id: Uuid,
    streamId: Uuid,
    cycleId: Uuid,
    triggerName: Type.String(),
    status: StringEnum(RUN_STATUSES),
    input: JsonObject,
    createdBy: Type.String({ description: 'the principal id that started the run' }),
    trigger: RunTrigger,
    depth: Type.Integer({ minimum: 0, description: 'the message-trigger loop guard: 0 unless an agent\'s message started the run, then the depth of the run that wrote it + 1' }),
    createdAt: Timestamp,
    startedAt: Nullable(Timestamp),
    finishedAt: Nullable(Timestamp),
    error: Nullable(RunProblem),
    phases: Type.Array(PhaseRun),
    ...UsageFields,
    retryOf: Type.Optional(Nullable(Uuid)),
    retriedBy: Type.Optional(Nullable(Uuid)),
  },
  { title: 'Run' },
)
export type Run = Static<typeof Run>

export const StartRunBody = Type.Object({ input: Type.Optional(JsonObject) }, { additionalProperties: false, title: 'StartRun' })
export type StartRunBody = Static<typeof StartRunBody>

export const TriggerResult = Type.Object(
  { runs: Type.Array(Type.Object({ id: Uuid, status: StringEnum(RUN_STATUSES) }), { maxItems: MAX_RUNS_PER_TRIGGER, description: `the runs started (at most ${MAX_RUNS_PER_TRIGGER}); read each with GET /api/runs/{id}` }) },
  { title: 'TriggerResult' },
)

export const RunIdParams = Type.Object({ runId: Uuid }, { additionalProperties: false })
export const DecisionParams = Type.Object({ runId: Uuid, phaseRunId: Uuid }, { additionalProperties: false })
export const TriggerParams = Type.Object(
  { streamId: Uuid, triggerName: Type.String({ minLength: 1, maxLength: MAX_TRIGGER_NAME_LENGTH, description: `at most ${MAX_TRIGGER_NAME_LENGTH} characters (longer paths are a 414)` }) },
  { additionalProperties: false },
)

export const RunsQuery = Type.Object(
  {
    status: Type.Optional(StringEnum(RUN_STATUSES)),
    ...PageQuery.properties,
    order: Type.Optional(StringEnum(['asc', 'desc'], { description: 'asc (the default): oldest first; desc: newest first' })),
  },
  { additionalProperties: false },
)

export const DecisionBody = Type.Object(
  {
    decision: StringEnum(['approve', 'revise', 'reject']),
    note: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_NOTE_LENGTH })),
    override: Type.Optional(Type.Boolean({ description: 'an admin outside the phase\'s operatorPool decides it anyway (recorded on the decision); 403 from anyone else' })),
  },
  { additionalProperties: false, title: 'Decision' },
)
export type DecisionBody = Static<typeof DecisionBody>

export const TaskDeltaBody = Type.Object(
  { text: Type.String({ minLength: 1, maxLength: MAX_OUTPUT_TEXT_LENGTH, description: 'the next piece of the answer' }) },
  { additionalProperties: false, title: 'TaskDelta' },
)
export type TaskDeltaBody = Static<typeof TaskDeltaBody>

export const TaskDeltaAccepted = Type.Object(
  { accepted: Type.Literal(true), messageId: Uuid, offset: Type.Integer({ minimum: 0, description: 'characters of the message before this delta' }) },
  { title: 'TaskDeltaAccepted' },
)

export const TaskIdParams = Type.Object({ taskId: Uuid }, { additionalProperties: false })

// `{ output: { text } }`, `{ output: { content } }` or `{ error: { detail } }`: exactly one of each pair is checked
// after the schema (answerProblems in tasks/answer.ts), so that a wrong answer gets one precise pointer.
export const TaskResultBody = Type.Object(
  {
    output: Type.Optional(
      Type.Object(
        { text: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_OUTPUT_TEXT_LENGTH })), content: Type.Optional(Content) },
        { additionalProperties: false },
      ),
    ),
    error: Type.Optional(Type.Object({ detail: Type.String({ minLength: 1, maxLength: MAX_DETAIL_LENGTH }) }, { additionalProperties: false })),
    usage: Type.Optional(
      Type.Object(
        { inputTokens: Type.Integer({ minimum: 0, maximum: 1e12 }), outputTokens: Type.Integer({ minimum: 0, maximum: 1e12 }) },
        { additionalProperties: false, description: 'the tokens this answer used, as the agent counts them (optional; summed into the phase and run)' },
      ),
    ),
  },
  { additionalProperties: false, title: 'TaskResult' },
)
export type TaskResultBody = Static<typeof TaskResultBody>

export const TaskAccepted = Type.Object({ accepted: Type.Literal(true) }, { title: 'TaskAccepted' })

export const ClaimBody = Type.Object(
  { waitSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_WAIT_SECONDS })) },
  { additionalProperties: false, title: 'ClaimTask' },
)

const Free = Type.Object({}, { additionalProperties: true })

/** docs/runs-and-events.md's task payload (also adapters/adapter.ts TaskPayload), as POST /api/tasks/claim returns it. */
export const TaskPayloadSchema = Type.Object(
  {
    task: Type.Object({ id: Uuid, attempt: Type.Integer() }),
    run: Type.Object({ id: Uuid, input: Free }),
    stream: Type.Object({ id: Uuid, name: Type.String() }),
    cycle: Type.Object({ id: Uuid, triggerName: Type.String(), description: Nullable(Type.String()) }),
    phase: Type.Object({ id: Uuid, index: Type.Integer(), phaseName: Type.String(), goal: Type.String(), instructions: Type.String(), feedback: Nullable(Type.String()) }),
    agent: Type.Object({ id: Uuid, name: Type.String(), instructions: Nullable(Type.String()), config: Free }),
    previous: Type.Array(Type.Object({ phaseName: Type.String(), text: Type.String() })),
    messages: Type.Array(Type.Object({ id: Uuid, authorId: Type.String(), authorType: StringEnum(['principal', 'agent']), text: Type.String(), createdAt: Timestamp })),
    result: Type.Object({ url: Type.String(), token: Type.String() }),
    tools: Type.Optional(Type.Array(Type.Object({ name: Type.String(), description: Type.String(), inputSchema: Free }), { description: 'the tools the agent may call (custom_webhook and custom_token_only agents with `capabilities.tools`)' })),
    toolsUrl: Type.Optional(Type.String({ description: 'POST {toolsUrl}/{name} `{ input }` calls one (task token or agent key)' })),
  },
  { title: 'TaskPayload' },
)
