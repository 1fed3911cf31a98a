// Operator commands (`npm run cli -- <command>`), using DATABASE_URL like the server. A command is one
// entry of COMMANDS: its words, options, usage line and a `run` that calls a module function. Add one by
// adding an entry (options are node:util parseArgs options; `--help` is added to every command).
import { parseArgs, type ParseArgsConfig } from 'node:util'
import type { Kysely } from 'kysely'
import { ConfigError, loadConfig } from './config.js'
import { connect } from './db/connect.js'
import type { Database } from './db/database.js'
import { migrateToLatest } from './db/migrate.js'
import { loadDotEnv } from './dotenv.js'
import { DEFAULT_WORKSPACE, ensureWorkspace } from './workspaces/store.js'
import { ensureLocalPrincipal, revokeApiKey } from './principals/store.js'
import { UsageError, createKeyCommand, listKeysCommand } from './principals/cli.js'
import { rekeyCommand } from './credentials/cli.js'
import { VaultError } from './credentials/vault.js'
import type { Config } from './config.js'

export { UsageError }

export interface Invocation {
  db: Kysely<Database>
  config: Config
  values: Record<string, string | boolean | undefined>
  positionals: string[]
  /** Migrations this run applied (the CLI migrates before every command). */
  applied: string[]
}

export interface Command {
  words: string[]
  usage: string
  summary: string
  options?: ParseArgsConfig['options']
  /** Lines to print; a non-zero `exitCode` for a command that ran but failed. */
  run(invocation: Invocation): Promise<{ lines: string[]; exitCode?: number }>
}

export const COMMANDS: Command[] = [
  {
    words: ['migrate'],
    usage: 'migrate',
    summary: 'apply the migrations (the server also does this at start-up)',
    run: async ({ applied }) => ({ lines: [applied.length ? `applied: ${applied.join(', ')}` : 'already up to date'] }),
  },
  {
    words: ['keys', 'create'],
    usage: 'keys create --name <name> [--handle <handle>] [--role admin|member] [--workspace <name>]  |  keys create --name <name> --agent <agent id> [--workspace <name>]',
    summary:
      `create an API key (role: member unless --role admin; handle: from the name unless --handle, and a handle that exists gets a new key for the same principal; --agent: an agent key bound to that agent; workspace: ${DEFAULT_WORKSPACE}, created if new); the key is the last word printed`,
    options: { name: { type: 'string' }, handle: { type: 'string' }, role: { type: 'string' }, agent: { type: 'string' }, workspace: { type: 'string', default: DEFAULT_WORKSPACE } },
    run: async ({ db, values }) => ({
      lines: await createKeyCommand(db, {
        workspace: values.workspace as string,
        ...(typeof values.name === 'string' ? { name: values.name } : {}),
        ...(typeof values.handle === 'string' ? { handle: values.handle } : {}),
        ...(typeof values.role === 'string' ? { role: values.role } : {}),
        ...(typeof values.agent === 'string' ? { agent: values.agent } : {}),
      }),
    }),
  },
  {
    words: ['keys', 'list'],
    usage: 'keys list',
    summary: 'list the keys (id, workspace, handle, role, agent, name, state), never the keys themselves',
    run: async ({ db }) => ({ lines: await listKeysCommand(db) }),
  },
  {
    words: ['keys', 'revoke'],
    usage: 'keys revoke <key id>',
    summary: 'revoke a key at once',
    run: async ({ db, positionals }) => {
      const [id] = positionals
      if (!id || positionals.length > 1) throw new UsageError('give exactly one key id')
      if (await revokeApiKey(db, id)) return { lines: [`revoked ${id}`] }
      return { lines: [`tandem: no active key with id ${id}`], exitCode: 1 }
    },
  },
  {
    words: ['credentials', 'rekey'],
    usage: 'credentials rekey',
    summary: 're-encrypt every credential and webhook signing secret with TANDEM_SECRET_KEY (the old ones read with TANDEM_SECRET_KEY_PREVIOUS)',
    run: async ({ db, config }) => ({ lines: await rekeyCommand(db, config) }),
  },
]

export function usage(commands = COMMANDS): string {
  return ['usage: npm run cli -- <command> [options]', '', ...commands.map((c) => `  ${c.usage}\n      ${c.summary}`), '', 'Every command takes --help.'].join('\n')
}

/** Finds the command named by the leading words of argv; the rest are its options and arguments. */
export function findCommand(argv: string[]): { command: Command; rest: string[] } | undefined {
  const matches = COMMANDS.filter((c) => c.words.every((word, i) => argv[i] === word)).sort((a, b) => b.words.length - a.words.length)
  const command = matches[0]
  return command && { command, rest: argv.slice(command.words.length) }
}

async function main(argv: string[]): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    console.log(usage())
    return argv.length === 0 ? 2 : 0
  }
  const found = findCommand(argv)
  if (!found) {
    const words = argv.filter((a) => !a.startsWith('-')).slice(0, 2).join(' ')
    console.error(`tandem: unknown command "${words || argv[0]}"\n\n${usage()}`)
    return 2
  }
  const { command, rest } = found
  let parsed
  try {
    parsed = parseArgs({ args: rest, allowPositionals: true, strict: true, options: { ...command.options, help: { type: 'boolean', short: 'h' } } })
  } catch (error) {
    console.error(`tandem: ${(error as Error).message}\nusage: npm run cli -- ${command.usage}`)
    return 2
  }
  if (parsed.values.help) {
    console.log(`usage: npm run cli -- ${command.usage}\n  ${command.summary}`)
    return 0
  }
  let config
  try {
    loadDotEnv()
    config = loadConfig()
  } catch (error) {
    console.error(error instanceof ConfigError ? `tandem: invalid configuration: ${error.message}` : `tandem: ${(error as Error).message}`)
    return 2
  }
  const database = connect(config.databaseUrl)
  try {
    const applied = await migrateToLatest(database)
    await ensureLocalPrincipal(database.db, await ensureWorkspace(database.db, DEFAULT_WORKSPACE))
    const { lines, exitCode = 0 } = await command.run({ db: database.db, config, values: parsed.values, positionals: parsed.positionals, applied })
    for (const line of lines) (exitCode === 0 ? console.log : console.error)(line)
    return exitCode
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`tandem: ${error.message}\nusage: npm run cli -- ${command.usage}`)
      return 2
    }
    if (error instanceof VaultError || error instanceof ConfigError) {
      console.error(`tandem: ${error.message}`)
      return 2
    }
    throw error
  } finally {
    await database.close()
  }
}

process.exitCode = await main(process.argv.slice(2))
