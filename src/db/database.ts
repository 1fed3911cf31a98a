// The database as Kysely sees it: one table interface per table, each owned by its feature's store.
import type { WorkspaceTable } from '../workspaces/store.js'
import type { ApiKeyTable, PrincipalTable } from '../principals/store.js'
import type { CredentialTable } from '../credentials/store.js'
import type { AgentTable } from '../agents/store.js'
import type { StreamTable } from '../streams/store.js'
import type { MessageRevisionTable, MessageTable } from '../chat/store.js'
import type { CycleTable } from '../cycles/store.js'
import type { IdempotencyKeyTable } from '../http/idempotency.js'
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
  idempotency_keys: IdempotencyKeyTable
  messages: MessageTable
  message_revisions: MessageRevisionTable
  jobs: JobTable
  runs: RunTable
  run_tasks: RunTaskTable
}
