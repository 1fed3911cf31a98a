// The database as Kysely sees it: one table interface per table, each in its feature's `*.table.ts`
// (type-only files that import nothing), so db/ depends on no feature's code and not on http/.
import type { WorkspaceTable } from '../workspaces/workspaces.table.js'
import type { ApiKeyTable, PrincipalTable } from '../principals/principals.table.js'
import type { CredentialTable } from '../credentials/credentials.table.js'
import type { AgentTable } from '../agents/agents.table.js'
import type { StreamTable } from '../streams/streams.table.js'
import type { MessageRevisionTable, MessageTable } from '../chat/chat.table.js'
import type { ClockEffectTable, CycleTable } from '../cycles/cycles.table.js'
import type { IdempotencyRequestTable } from '../idempotency/idempotency.table.js'
import type { StreamEventHeadTable, StreamEventTable } from '../events/events.table.js'
import type { WebhookDeliveryTable, WebhookTable } from '../events/webhooks/webhooks.table.js'
import type { JobTable } from '../jobs/jobs.table.js'
import type { RunTable, RunTaskTable } from '../runs/runs.table.js'
import type { AssetTable } from '../assets/assets.table.js'
import type { AgentTemplateTable } from '../templates/templates.table.js'
import type { HookReceiptTable, InboundHookTable, InboxClaimTable, MessageTriggerPassTable, MessageTriggerTable, ScheduleFiringTable, ScheduleTable, TriggerChainRunTable, TriggerChainTable } from '../triggers/operators.table.js'
import type { McpServerTable } from '../mcp/mcp-servers.table.js'
import type { ToolCallTable } from '../runs/tool-calls/tool-calls.table.js'
import type { InstanceTable } from '../failover/instances.table.js'
import type { McpSessionTable } from '../mcp-server/sessions.table.js'
import type { A2aPushConfigTable, A2aPushDeliveryTable, A2aRemoteTaskTable, A2aTaskMessageTable, A2aTaskTable } from '../a2a/a2a.table.js'
import type { InsightAgentDayTable, InsightAgentHourTable, InsightPhaseRunTable, InsightScopeDayTable, InsightUnfoldedTable, InsightWaitTable } from '../insights/insights.table.js'

export interface Database {
  workspaces: WorkspaceTable
  api_keys: ApiKeyTable
  principals: PrincipalTable
  credentials: CredentialTable
  agents: AgentTable
  streams: StreamTable
  cycles: CycleTable
  idempotency_requests: IdempotencyRequestTable
  messages: MessageTable
  message_revisions: MessageRevisionTable
  stream_event_heads: StreamEventHeadTable
  stream_events: StreamEventTable
  webhooks: WebhookTable
  webhook_deliveries: WebhookDeliveryTable
  jobs: JobTable
  runs: RunTable
  run_tasks: RunTaskTable
  assets: AssetTable
  agent_templates: AgentTemplateTable
  schedules: ScheduleTable
  message_triggers: MessageTriggerTable
  message_trigger_passes: MessageTriggerPassTable
  inbound_hooks: InboundHookTable
  hook_receipts: HookReceiptTable
  inbox_claims: InboxClaimTable
  mcp_servers: McpServerTable
  clock_effects: ClockEffectTable
  tool_calls: ToolCallTable
  instances: InstanceTable
  trigger_chains: TriggerChainTable
  trigger_chain_runs: TriggerChainRunTable
  schedule_firings: ScheduleFiringTable
  mcp_sessions: McpSessionTable
  a2a_tasks: A2aTaskTable
  a2a_task_messages: A2aTaskMessageTable
  a2a_remote_tasks: A2aRemoteTaskTable
  a2a_push_configs: A2aPushConfigTable
  a2a_push_deliveries: A2aPushDeliveryTable
  insight_phase_runs: InsightPhaseRunTable
  insight_waits: InsightWaitTable
  insight_agent_days: InsightAgentDayTable
  insight_agent_hours: InsightAgentHourTable
  insight_scope_days: InsightScopeDayTable
  insight_unfolded: InsightUnfoldedTable
}
