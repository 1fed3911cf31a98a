// Process entry: .env and configuration → app → listen; SIGTERM/SIGINT finish in-flight requests and close
// the database. A failure to start is one line on stderr naming the cause and the variable to change, exit
// code 1 (the stack too at LOG_LEVEL=debug or trace). On a terminal the logs are pretty and a banner names
// the console and the API docs; elsewhere the logs are JSON, one object a line.
import type { FastifyInstance } from 'fastify'
import pretty from 'pino-pretty'
import { buildApp } from './app.js'
import { startBanner, describeDatabase } from './banner.js'
import { ConfigError, loadConfig, type Config } from './config.js'
import { loadDotEnv } from './dotenv.js'
import { helpText } from './help.js'
import { describeStartupError, nodeVersionProblem, sqliteFolderProblem } from './startup.js'

async function main(): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    console.log(helpText())
    process.exit(0)
  }
  const nodeProblem = nodeVersionProblem()
  if (nodeProblem) {
    console.error(`tandem: ${nodeProblem}`)
    process.exit(1)
  }
  let config: Config
  try {
    loadDotEnv()
    config = loadConfig()
  } catch (error) {
    console.error(error instanceof ConfigError ? `tandem: invalid configuration: ${error.message}` : `tandem: cannot read .env: ${(error as Error).message}`)
    process.exit(1)
  }
  const folderProblem = sqliteFolderProblem(config.databaseUrl)
  if (folderProblem) {
    console.error(`tandem: ${folderProblem}`)
    process.exit(1)
  }
  const terminal = process.stdout.isTTY === true
  let app: FastifyInstance | undefined
  let phase: 'build' | 'listen' = 'build'
  try {
    const logStream = terminal ? pretty({ translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' }) : undefined
    app = await buildApp(config, logStream ? { logStream } : {})
    phase = 'listen'
    const url = await app.listen({ port: config.port, host: config.host })
    const facts = { url, console: `${url}/`, docs: `${url}/docs`, database: describeDatabase(config.databaseUrl), auth: config.auth, drafter: config.drafter.kind }
    if (terminal) console.log(startBanner(url, config))
    else app.log.info(facts, `Tandem listening on ${url}`)
  } catch (error) {
    // Start-up can still find the configuration wanting (e.g. an unreadable secret.key).
    console.error(error instanceof ConfigError ? `tandem: invalid configuration: ${error.message}` : `tandem: ${describeStartupError(error, config, phase)}`)
    if (config.logLevel === 'debug' || config.logLevel === 'trace') console.error(error)
    await app?.close().catch(() => {})
    process.exit(1)
  }
  const server = app

  let closing = false
  const shutdown = async (signal: string) => {
    if (closing) return
    closing = true
    server.log.info({ signal }, 'shutting down')
    await server.close()
    process.exit(0)
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGINT', () => void shutdown('SIGINT'))
}

await main()
