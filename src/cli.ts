// Operator commands: `migrate`, `keys create|list|revoke`. Uses DATABASE_URL like the server.
import { parseArgs } from 'node:util'
import { ConfigError, loadConfig } from './config.js'
import { connect } from './db/connect.js'
import { migrateToLatest } from './db/migrate.js'
import { DEFAULT_WORKSPACE, createApiKey, ensureWorkspace, listApiKeys, revokeApiKey } from './workspaces/store.js'

const USAGE = `usage:
  npm run cli -- migrate
  npm run cli -- keys create --name <name> [--role admin|member] [--workspace <name>]
  npm run cli -- keys list
  npm run cli -- keys revoke <key id>`

function fail(message: string): never {
  console.error(message)
  process.exit(2)
}

async function run(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { name: { type: 'string' }, role: { type: 'string', default: 'member' }, workspace: { type: 'string', default: DEFAULT_WORKSPACE } },
  })
  const [command, sub, arg] = positionals
  let config
  try {
    config = loadConfig()
  } catch (error) {
    if (error instanceof ConfigError) fail(`tandem: invalid configuration: ${error.message}`)
    throw error
  }
  const database = connect(config.databaseUrl)
  try {
    const applied = await migrateToLatest(database)
    await ensureWorkspace(database.db, DEFAULT_WORKSPACE)
    if (command === 'migrate') {
      console.log(applied.length ? `applied: ${applied.join(', ')}` : 'already up to date')
    } else if (command === 'keys' && sub === 'create') {
      if (!values.name) fail(`--name is required\n${USAGE}`)
      if (values.role !== 'admin' && values.role !== 'member') fail('--role must be admin or member')
      const workspaceId = await ensureWorkspace(database.db, values.workspace as string)
      const created = await createApiKey(database.db, { workspaceId, name: values.name, role: values.role })
      console.log(`key id ${created.id}, principal ${created.principalId}, role ${values.role}, workspace ${values.workspace}`)
      console.log('Store this key now; it is not shown again:')
      console.log(created.key)
    } else if (command === 'keys' && sub === 'list') {
      for (const key of await listApiKeys(database.db)) {
        console.log(`${key.id}  ${key.workspace}  ${key.role}  ${key.name}  ${key.revoked_at ? `revoked ${key.revoked_at}` : 'active'}`)
      }
    } else if (command === 'keys' && sub === 'revoke' && arg) {
      console.log((await revokeApiKey(database.db, arg)) ? `revoked ${arg}` : `no active key ${arg}`)
    } else {
      fail(USAGE)
    }
  } finally {
    await database.close()
  }
}

await run(process.argv.slice(2))
