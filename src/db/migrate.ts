// Applies the migrations (in code, so they work from tsx and from dist/ alike).
import { Migrator, type Migration, type MigrationProvider, type Kysely } from 'kysely'
import * as initial from './migrations/0001_initial.js'
import type { Database } from './database.js'

const migrations: Record<string, Migration> = {
  '0001_initial': initial,
}

const provider: MigrationProvider = { getMigrations: async () => migrations }

export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  const migrator = new Migrator({ db, provider })
  const { error, results } = await migrator.migrateToLatest()
  if (error) throw error instanceof Error ? error : new Error(String(error))
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}
