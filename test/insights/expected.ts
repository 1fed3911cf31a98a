// The scorecard figures of the contract computed straight from rollup rows (the tests' own reading, not the
// service's), and a small deterministic generator for the varied histories the rollup tests build.
import type { InsightPhaseRunTable, InsightWaitTable } from '../../src/insights/insights.table.js'

/** mulberry32, so a failure can be replayed. */
export function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const nearestRank = (sorted: number[], k: number) => sorted[Math.ceil((k * sorted.length) / 100) - 1]!
const usd = (value: number) => Math.round(value * 1e9) / 1e9

export function expectedFigures(rows: InsightPhaseRunTable[], waits: InsightWaitTable[]) {
  const sum = (pick: (r: InsightPhaseRunTable) => number) => rows.reduce((s, r) => s + pick(r), 0)
  const approved = sum((r) => r.approved)
  const rejected = sum((r) => r.rejected)
  const priced = rows.filter((r) => r.cost_usd !== null)
  const gated = priced.filter((r) => r.gated === 1)
  const times = waits.filter((w) => w.decision_ms !== null).map((w) => Number(w.decision_ms)).sort((a, b) => a - b)
  return {
    phasesAnswered: sum((r) => r.answered),
    decisions: { approved, revised: sum((r) => r.revised), rejected, expired: sum((r) => r.expired), overridden: sum((r) => r.overridden) },
    firstPassApprovalRate: approved + rejected === 0 ? null : rows.filter((r) => r.approved > 0 && r.revised === 0).length / (approved + rejected),
    revisionsPerApprovedOutput: approved === 0 ? null : sum((r) => (r.approved > 0 ? r.revised : 0)) / approved,
    decisionTimeMs: times.length === 0 ? { median: null, p90: null, samples: 0 } : { median: nearestRank(times, 50), p90: nearestRank(times, 90), samples: times.length },
    toolCalls: { autoRun: sum((r) => r.tool_auto), approved: sum((r) => r.tool_approved), denied: sum((r) => r.tool_denied), failed: sum((r) => r.tool_failed) },
    questionsAsked: sum((r) => r.questions),
    usage: { inputTokens: sum((r) => Number(r.input_tokens)), outputTokens: sum((r) => Number(r.output_tokens)) },
    costUsd: priced.length === 0 ? null : usd(priced.reduce((s, r) => s + r.cost_usd!, 0)),
    costPerApprovedOutput: approved === 0 || gated.length === 0 ? null : usd(gated.reduce((s, r) => s + r.cost_usd!, 0) / approved),
    runsFailed: sum((r) => r.run_failed),
  }
}

/** A row's or bucket's figures without its names and bounds. */
export const figuresOnly = ({ agentId: _a, agentName: _n, providerType: _p, avatarAssetId: _v, start: _s, end: _e, cycleId: _c, phaseId: _i, triggerName: _t, phaseName: _m, ...figures }: Record<string, unknown>) => figures
