// Operator commands: `migrate`, `keys create|list|revoke`, `credentials rekey`. Uses DATABASE_URL like the server.
import { parseArgs } from 'node:util'
import { ConfigError, loadConfig } from './config.js'
import { connect } from './db/connect.js'
import { migrateToLatest } from './db/migrate.js'
import { DEFAULT_WORKSPACE, ensureWorkspace } from './workspaces/store.js'
import { ensureLocalPrincipal } from './principals/store.js'
import { KEYS_USAGE, UsageError, createKeyCommand, listKeysCommand, revokeKeyCommand } from './principals/cli.js'
import { CREDENTIALS_USAGE, rekeyCommand } from './credentials/cli.js'
import { VaultError } from './credentials/vault.js'

const USAGE = `usage:
  npm run cli -- migrate
${KEYS_USAGE}
${CREDENTIALS_USAGE}`

function fail(message: string): never {
  console.error(message)
  process.exit(2)
}

async function run(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      handle: { type: 'string' },
      role: { type: 'string' },
      agent: { type: 'string' },
      workspace: { type: 'string', default: DEFAULT_WORKSPACE },
    },
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
    await ensureLocalPrincipal(database.db, await ensureWorkspace(database.db, DEFAULT_WORKSPACE))
    let lines: string[]
    if (command === 'migrate') {
      lines = [applied.length ? `applied: ${applied.join(', ')}` : 'already up to date']
    } else if (command === 'keys' && sub === 'create') {
      lines = await createKeyCommand(database.db, { ...values, workspace: values.workspace as string })
    } else if (command === 'keys' && sub === 'list') {
      lines = await listKeysCommand(database.db)
    } else if (command === 'keys' && sub === 'revoke' && arg) {
      lines = await revokeKeyCommand(database.db, arg)
    } else if (command === 'credentials' && sub === 'rekey') {
      lines = await rekeyCommand(database.db, config)
    } else {
      fail(USAGE)
    }
    for (const line of lines) console.log(line)
  } catch (error) {
    if (error instanceof UsageError) fail(`${error.message}\n${USAGE}`)
    if (error instanceof VaultError || error instanceof ConfigError) fail(`tandem: ${error.message}`)
    throw error
  } finally {
    await database.close()
  }
}

await run(process.argv.slice(2))
