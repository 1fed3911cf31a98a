// Scorecard shapes (docs/insights.md): the figures, a row per agent, the detail's series and breakdown, and the
// query strings with their sorts and buckets.
import Type, { type Static } from 'typebox'
import { Nullable, StringEnum, Timestamp, Uuid } from '../http/schemas.js'

const Count = Type.Integer({ minimum: 0 })
const Rate = Nullable(Type.Number({ minimum: 0 }))

export const FigureFields = {
  phasesAnswered: Count,
  decisions: Type.Object({ approved: Count, revised: Count, rejected: Count, expired: Count, overridden: Count }),
  firstPassApprovalRate: Rate,
  revisionsPerApprovedOutput: Rate,
  decisionTimeMs: Type.Object({ median: Nullable(Type.Integer({ minimum: 0 })), p90: Nullable(Type.Integer({ minimum: 0 })), samples: Count }),
  toolCalls: Type.Object({ autoRun: Count, approved: Count, denied: Count, failed: Count }),
  questionsAsked: Count,
  usage: Type.Object({ inputTokens: Count, outputTokens: Count }),
  costUsd: Rate,
  costPerApprovedOutput: Rate,
  runsFailed: Count,
}

export const ScorecardRow = Type.Object(
  { agentId: Uuid, agentName: Nullable(Type.String()), providerType: Nullable(Type.String()), avatarAssetId: Nullable(Uuid), ...FigureFields },
  { title: 'AgentScorecard', description: 'an agent\'s figures over the counted phase runs of the window (agentName and providerType null once the agent is deleted)' },
)
export type ScorecardRow = Static<typeof ScorecardRow>

export const SORTS = [
  'phasesAnswered', 'decisions.approved', 'decisions.revised', 'decisions.rejected', 'decisions.expired', 'decisions.overridden',
  'firstPassApprovalRate', 'revisionsPerApprovedOutput', 'decisionTimeMs.median', 'decisionTimeMs.p90', 'decisionTimeMs.samples',
  'toolCalls.autoRun', 'toolCalls.approved', 'toolCalls.denied', 'toolCalls.failed', 'questionsAsked',
  'usage.inputTokens', 'usage.outputTokens', 'costUsd', 'costPerApprovedOutput', 'runsFailed',
] as const
export type Sort = (typeof SORTS)[number]

const WindowFields = {
  from: Type.Optional(Timestamp),
  to: Type.Optional(Timestamp),
  streamId: Type.Optional(Uuid),
  cycleId: Type.Optional(Uuid),
}

export const ScorecardsQuery = Type.Object(
  {
    ...WindowFields,
    sort: Type.Optional(StringEnum(SORTS, { description: 'a figure\'s dotted name (default phasesAnswered)' })),
    order: Type.Optional(StringEnum(['asc', 'desc'] as const)),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
)
export type ScorecardsQuery = Static<typeof ScorecardsQuery>

export const ScorecardQuery = Type.Object(
  { ...WindowFields, bucket: Type.Optional(StringEnum(['hour', 'day'] as const, { description: 'default: hour for windows up to 72 hours, else day' })) },
  { additionalProperties: false },
)
export type ScorecardQuery = Static<typeof ScorecardQuery>

export const AgentIdParams = Type.Object({ agentId: Uuid }, { additionalProperties: false })

const Window = Type.Object({ from: Timestamp, to: Timestamp })

export const ScorecardPage = Type.Object(
  { window: Window, data: Type.Array(ScorecardRow), nextCursor: Nullable(Type.String()) },
  { title: 'AgentScorecardPage' },
)

export const SeriesPoint = Type.Object({ start: Timestamp, end: Timestamp, ...FigureFields }, { title: 'ScorecardBucket' })
export const BreakdownRow = Type.Object(
  { cycleId: Uuid, triggerName: Type.String(), phaseId: Uuid, phaseName: Type.String(), ...FigureFields },
  { title: 'ScorecardBreakdown' },
)

export const ScorecardDetail = Type.Object(
  {
    agent: ScorecardRow,
    window: Type.Object({ from: Timestamp, to: Timestamp, bucket: StringEnum(['hour', 'day'] as const) }),
    series: Type.Array(SeriesPoint, { maxItems: 1000 }),
    breakdown: Type.Array(BreakdownRow),
  },
  { title: 'AgentScorecardDetail' },
)
