// The database as Kysely sees it: one table interface per table, each in its feature's `*.table.ts`
// (type-only files that import nothing), so db/ depends on no feature's code and not on http/ — except the
// principals' and credentials' tables, still declared in their stores.
import type { WorkspaceTable } from '../workspaces/workspaces.table.js'
import type { ApiKeyTable, PrincipalTable } from '../principals/store.js'
import type { CredentialTable } from '../credentials/store.js'
import type { AgentTable } from '../agents/agents.table.js'
import type { StreamTable } from '../streams/streams.table.js'
import type { MessageRevisionTable, MessageTable } from '../chat/chat.table.js'
import type { CycleTable } from '../cycles/cycles.table.js'
import type { IdempotencyRequestTable } from '../idempotency/idempotency.table.js'
import type { StreamEventHeadTable, StreamEventTable } from '../events/store.js'
import type { JobTable } from '../jobs/sqlite.js'
import type { RunTable, RunTaskTable } from '../runs/store.js'

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
  jobs: JobTable
  runs: RunTable
  run_tasks: RunTaskTable
}
