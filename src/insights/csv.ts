// Scorecards as CSV (RFC 4180: CRLF, quoted where needed, nulls empty). A text cell that a spreadsheet would take
// for a formula (starting with = + - @, a tab or a CR) gets a leading `'`.
import type { Figures } from './figures.js'

export const FIGURE_COLUMNS = [
  'phasesAnswered', 'approved', 'revised', 'rejected', 'expired', 'overridden', 'firstPassApprovalRate', 'revisionsPerApprovedOutput',
  'decisionTimeMedianMs', 'decisionTimeP90Ms', 'decisionTimeSamples', 'toolCallsAutoRun', 'toolCallsApproved', 'toolCallsDenied',
  'toolCallsFailed', 'questionsAsked', 'inputTokens', 'outputTokens', 'costUsd', 'costPerApprovedOutput', 'runsFailed',
]
export const LIST_HEADER = ['agentId', 'agentName', 'providerType', ...FIGURE_COLUMNS]
export const SERIES_HEADER = ['start', 'end', ...FIGURE_COLUMNS]

type Cell = string | number | null

export function figureCells(f: Figures): Cell[] {
  return [
    f.phasesAnswered, f.decisions.approved, f.decisions.revised, f.decisions.rejected, f.decisions.expired, f.decisions.overridden,
    f.firstPassApprovalRate, f.revisionsPerApprovedOutput, f.decisionTimeMs.median, f.decisionTimeMs.p90, f.decisionTimeMs.samples,
    f.toolCalls.autoRun, f.toolCalls.approved, f.toolCalls.denied, f.toolCalls.failed, f.questionsAsked,
    f.usage.inputTokens, f.usage.outputTokens, f.costUsd, f.costPerApprovedOutput, f.runsFailed,
  ]
}

function cell(value: Cell): string {
  if (value === null) return ''
  if (typeof value === 'number') return String(value)
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

export function toCsv(header: string[], rows: Cell[][]): string {
  return [header, ...rows].map((row) => row.map(cell).join(',')).join('\r\n') + '\r\n'
}
