// The series of operators' decisions and waits (docs/insights.md, "Metrics"), counted per instance as the run
// engine tells of them (src/insights/events.ts): decisions and tool approvals by agent, decision and by whom; how
// long each ended wait took; and how many wait now (read from the database at scrape time). `agent_id` takes at
// most TANDEM_METRICS_AGENT_LABELS values per instance, then `_other`, so the series stay bounded.
import client from 'prom-client'
import { sql } from 'kysely'
import type { FastifyInstance } from 'fastify'
import { onInsightEvent } from './events.js'
import { afterCommit } from '../db/retry.js'

// 1 s … 7 d: a person answers in seconds, hours or days.
const WAIT_BUCKETS = [1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 12 * 3600, 86400, 3 * 86400, 7 * 86400]

/**
 * What `tandem_waiting` counts at each scrape, by kind. Each reads an index that holds only the rows in that state
 * (migration 0142), so a scrape costs the waits open now, not every run and tool call ever made; the values are
 * written into the SQL, since a partial index serves only a query that names its very condition.
 */
export const WAITING_NOW = {
  decision: sql<{ n: unknown }>`select count(*) as n from runs where status = 'waiting' and document like '%"status":"awaiting_decision"%'`,
  tool_approval: sql<{ n: unknown }>`select count(*) as n from tool_calls where status = 'awaiting_approval'`,
  question: sql<{ n: unknown }>`select count(*) as n from tool_calls where name = 'tandem.ask_operator' and status = 'running' and finished_at is null`,
}

/** Keeps the first `limit` agent ids seen as labels; the rest are `_other`. */
export function agentLabels(limit: number): (agentId: string) => string {
  const seen = new Set<string>()
  return (agentId) => {
    if (seen.has(agentId)) return agentId
    if (seen.size >= limit) return '_other'
    seen.add(agentId)
    return agentId
  }
}

export function reportInsightMetrics(app: FastifyInstance, agentLabelLimit: number): void {
  const registers = [app.metrics.registry]
  const { db } = app.database
  const label = agentLabels(agentLabelLimit)
  const decisions = new client.Counter({ name: 'tandem_decisions_total', help: 'Decisions on phases by agent, decision (approve, revise, reject, fail) and who made it (person, override, expiry)', labelNames: ['agent_id', 'decision', 'by'], registers })
  const approvals = new client.Counter({ name: 'tandem_tool_approvals_total', help: 'Decisions on tool calls awaiting approval by agent, decision (approve, deny) and who made it (person, expiry)', labelNames: ['agent_id', 'decision', 'by'], registers })
  const waits = new client.Histogram({ name: 'tandem_wait_duration_seconds', help: 'How long each ended human wait took, by kind (decision, tool_approval, question) and outcome', labelNames: ['kind', 'outcome'], buckets: WAIT_BUCKETS, registers })
  new client.Gauge({
    name: 'tandem_waiting',
    help: 'Waits open now, by kind (read from the database: the same on every instance)',
    labelNames: ['kind'],
    registers,
    async collect() {
      for (const [kind, query] of Object.entries(WAITING_NOW)) this.set({ kind }, Number((await query.execute(db)).rows[0]?.n ?? 0))
    },
  })
  new client.Gauge({
    name: 'tandem_scorecard_changes_unfolded',
    help: "Changes of scorecard rows not yet added to the summed rollups (read from the database: the fold's backlog, a second or two of changes)",
    registers,
    async collect() {
      this.set(Number((await sql<{ n: unknown }>`select count(*) as n from insight_unfolded`.execute(db)).rows[0]?.n ?? 0))
    },
  })
  // Counted once the change commits: a transaction run again after a deadlock (src/db/retry.ts) counts once.
  onInsightEvent(db, (event, trx) => {
    if (event.type === 'decision') afterCommit(trx, () => decisions.inc({ agent_id: label(event.agentId), decision: event.decision, by: event.by }))
    else if (event.type === 'tool_approval') afterCommit(trx, () => approvals.inc({ agent_id: label(event.agentId), decision: event.decision, by: event.by }))
    else if (event.type === 'wait_ended') afterCommit(trx, () => waits.observe({ kind: event.kind, outcome: event.outcome }, Math.max(0, Date.parse(event.at) - Date.parse(event.since)) / 1000))
  })
}
