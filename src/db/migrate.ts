// Applies the migrations (in code, so they work from tsx and from dist/ alike).
import { setTimeout } from 'node:timers/promises'
import { Migrator, type Migration, type MigrationProvider, type MigrationResultSet } from 'kysely'
import * as initial from './migrations/0001_initial.js'
import * as revisionTrigger from './migrations/0002_message_revision_trigger.js'
import * as idempotencyKeys from './migrations/0003_idempotency_keys.js'
import * as idempotencyPerPrincipal from './migrations/0004_idempotency_per_principal.js'
import * as principals from './migrations/0010_principals.js'
import * as credentials from './migrations/0011_credentials.js'
import * as jobs from './migrations/0015_jobs.js'
import * as runs from './migrations/0016_runs.js'
import * as events from './migrations/0020_events.js'
import * as webhooks from './migrations/0021_webhooks.js'
import * as agentSearch from './migrations/0035_agent_search.js'
import * as traceContext from './migrations/0036_trace_context.js'
import * as agentSearchScoring from './migrations/0037_agent_search_scoring.js'
import * as agentVersion from './migrations/0038_agent_version.js'
import * as assets from './migrations/0050_assets.js'
import * as agentTemplates from './migrations/0051_agent_templates.js'
import * as mcpServers from './migrations/0052_mcp_servers.js'
import * as messageStreaming from './migrations/0053_message_streaming.js'
import * as toolCalls from './migrations/0057_tool_calls.js'
import * as operators from './migrations/0060_operators.js'
import * as decisionPolicies from './migrations/0061_decision_policies.js'
import * as runsRouteCalls from './migrations/0070_runs_route_calls.js'
import * as instances from './migrations/0105_instances.js'
import * as triggerChains from './migrations/0110_trigger_chains.js'
import * as scheduleFirings from './migrations/0111_schedule_firings.js'
import * as mcpSessions from './migrations/0085_mcp_sessions.js'
import * as a2a from './migrations/0090_a2a.js'
import * as a2aRemoteTasks from './migrations/0091_a2a_remote_tasks.js'
import * as a2aHistory from './migrations/0120_a2a_history.js'
import * as a2aRemoteClock from './migrations/0121_a2a_remote_clock.js'
import * as insights from './migrations/0095_insights.js'
import * as messageStreamLength from './migrations/0130_message_stream_length.js'
import * as insightAgentDays from './migrations/0125_insight_agent_days.js'
import * as a2aPush from './migrations/0135_a2a_push.js'
import * as insightRollupDimensions from './migrations/0137_insight_rollup_dimensions.js'
import * as runTraceLink from './migrations/0138_run_trace_link.js'
import * as insightUnfolded from './migrations/0139_insight_unfolded.js'
import * as jobsDue from './migrations/0140_jobs_due.js'
import * as jobsRunAtDropped from './migrations/0141_jobs_run_at_dropped.js'
import * as openWorkIndexes from './migrations/0142_open_work_indexes.js'
import type { Db } from './connect.js'

const migrations: Record<string, Migration> = {
  '0001_initial': initial,
  '0002_message_revision_trigger': revisionTrigger,
  '0003_idempotency_keys': idempotencyKeys,
  '0004_idempotency_per_principal': idempotencyPerPrincipal,
  '0010_principals': principals,
  '0011_credentials': credentials,
  '0015_jobs': jobs,
  '0016_runs': runs,
  '0020_events': events,
  '0021_webhooks': webhooks,
  '0035_agent_search': agentSearch,
  '0036_trace_context': traceContext,
  '0037_agent_search_scoring': agentSearchScoring,
  '0038_agent_version': agentVersion,
  '0050_assets': assets,
  '0051_agent_templates': agentTemplates,
  '0052_mcp_servers': mcpServers,
  '0053_message_streaming': messageStreaming,
  '0057_tool_calls': toolCalls,
  '0060_operators': operators,
  '0061_decision_policies': decisionPolicies,
  '0070_runs_route_calls': runsRouteCalls,
  '0105_instances': instances,
  '0110_trigger_chains': triggerChains,
  '0111_schedule_firings': scheduleFirings,
  '0085_mcp_sessions': mcpSessions,
  '0090_a2a': a2a,
  '0091_a2a_remote_tasks': a2aRemoteTasks,
  '0120_a2a_history': a2aHistory,
  '0121_a2a_remote_clock': a2aRemoteClock,
  '0095_insights': insights,
  '0130_message_stream_length': messageStreamLength,
  '0125_insight_agent_days': insightAgentDays,
  '0135_a2a_push': a2aPush,
  '0137_insight_rollup_dimensions': insightRollupDimensions,
  '0138_run_trace_link': runTraceLink,
  '0139_insight_unfolded': insightUnfolded,
  '0140_jobs_due': jobsDue,
  '0141_jobs_run_at_dropped': jobsRunAtDropped,
  '0142_open_work_indexes': openWorkIndexes,
}

const provider: MigrationProvider = { getMigrations: async () => migrations }

/**
 * Kysely finds its bookkeeping tables by introspecting every schema; a table, schema or column another process
 * drops or alters meanwhile (PostgreSQL 42P01, 3F000, 42703: a test's schema dropped, graphile-worker migrating
 * its own) fails that look, not the migration. Look again, after a pause that grows, a few times.
 */
async function migrating(run: (migrator: Migrator) => Promise<MigrationResultSet>, database: Db): Promise<MigrationResultSet> {
  // Kysely looks its bookkeeping tables up across all schemas: name ours when we work in one.
  const migrator = new Migrator({ db: database.db, provider, ...(database.schema ? { migrationTableSchema: database.schema } : {}) })
  const raced = (failure: unknown) => ['42P01', '3F000', '42703'].includes((failure as { code?: string } | undefined)?.code ?? '')
  let outcome = await run(migrator)
  for (let retry = 0; retry < 8 && raced(outcome.error); retry++) {
    await setTimeout(20 * 2 ** retry * (0.5 + Math.random()))
    outcome = await run(migrator)
  }
  if (outcome.error) throw outcome.error instanceof Error ? outcome.error : new Error(String(outcome.error))
  return outcome
}

export async function migrateToLatest(database: Db): Promise<string[]> {
  const { results } = await migrating((migrator) => migrator.migrateToLatest(), database)
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}

/** Applies the migrations up to and including `name` (tests of a migration start from the schema before it). */
export async function migrateTo(database: Db, name: string): Promise<void> {
  await migrating((migrator) => migrator.migrateTo(name), database)
}
