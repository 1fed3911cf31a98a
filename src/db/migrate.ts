// Applies the migrations (in code, so they work from tsx and from dist/ alike).
import { Migrator, type Migration, type MigrationProvider } from 'kysely'
import * as initial from './migrations/0001_initial.js'
import * as revisionTrigger from './migrations/0002_message_revision_trigger.js'
import * as idempotencyKeys from './migrations/0003_idempotency_keys.js'
import * as idempotencyPerPrincipal from './migrations/0004_idempotency_per_principal.js'
import * as events from './migrations/0020_events.js'
import * as jobs from './migrations/0015_jobs.js'
import * as runs from './migrations/0016_runs.js'
import type { Db } from './connect.js'

const migrations: Record<string, Migration> = {
  '0001_initial': initial,
  '0002_message_revision_trigger': revisionTrigger,
  '0003_idempotency_keys': idempotencyKeys,
  '0004_idempotency_per_principal': idempotencyPerPrincipal,
  '0020_events': events,
  '0015_jobs': jobs,
  '0016_runs': runs,
}

const provider: MigrationProvider = { getMigrations: async () => migrations }

export async function migrateToLatest(database: Db): Promise<string[]> {
  // Kysely looks its bookkeeping tables up across all schemas: name ours when we work in one.
  const migrator = new Migrator({ db: database.db, provider, ...(database.schema ? { migrationTableSchema: database.schema } : {}) })
  const { error, results } = await migrator.migrateToLatest()
  if (error) throw error instanceof Error ? error : new Error(String(error))
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}
