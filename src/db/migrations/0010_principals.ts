// Principals: who an API key speaks for (a person or an agent) with a handle unique in the workspace.
// Existing keys each had a principal of their own: each becomes a principal whose handle is its key's name
// turned into a handle, deduplicated in the workspace with -2, -3, … (`local` is kept for the local admin).
// Frozen once landed; the handle rule is copied here so that later changes to it do not change history.
import type { Kysely } from 'kysely'

function handleOf(name: string): string {
  const mapped = Array.from(name.toLowerCase(), (c) => (/[a-z0-9._-]/.test(c) ? c : '-')).join('')
  const handle = mapped.replace(/^[-._]+/, '').slice(0, 64)
  return handle === '' ? 'key' : handle
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('principals')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('handle', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('principals_workspace_handle').unique().on('principals').columns(['workspace_id', 'handle']).execute()
  await db.schema.createIndex('api_keys_principal_id').on('api_keys').column('principal_id').execute()

  const keys: Array<{ principal_id: string; workspace_id: string; name: string; role: string; created_at: string }> = await db
    .selectFrom('api_keys')
    .select(['principal_id', 'workspace_id', 'name', 'role', 'created_at'])
    .orderBy('created_at')
    .orderBy('id')
    .execute()
  const taken = new Map<string, Set<string>>()
  const done = new Set<string>()
  for (const key of keys) {
    if (done.has(key.principal_id)) continue
    done.add(key.principal_id)
    const inWorkspace = taken.get(key.workspace_id) ?? new Set(['local'])
    taken.set(key.workspace_id, inWorkspace)
    const base = handleOf(key.name)
    let handle = base
    for (let n = 2; inWorkspace.has(handle); n += 1) handle = base.slice(0, 64 - `-${n}`.length) + `-${n}`
    inWorkspace.add(handle)
    await db
      .insertInto('principals')
      .values({ id: key.principal_id, workspace_id: key.workspace_id, handle, role: key.role, agent_id: null, created_at: key.created_at })
      .execute()
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('api_keys_principal_id').execute()
  await db.schema.dropTable('principals').execute()
}
