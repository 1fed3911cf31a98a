// Process entry: .env and configuration → app → listen; SIGTERM/SIGINT finish in-flight requests and close
// the database. A failure to start is one line on stderr naming the cause and the variable to change, exit
// code 1 (the stack too at LOG_LEVEL=debug or trace).
import type { FastifyInstance } from 'fastify'
import { buildApp } from './app.js'
import { ConfigError, loadConfig, type Config } from './config.js'
import { loadDotEnv } from './dotenv.js'
import { describeStartupError } from './startup.js'

async function main(): Promise<void> {
  let config: Config
  try {
    loadDotEnv()
    config = loadConfig()
  } catch (error) {
    console.error(error instanceof ConfigError ? `tandem: invalid configuration: ${error.message}` : `tandem: cannot read .env: ${(error as Error).message}`)
    process.exit(1)
  }
  let app: FastifyInstance | undefined
  let phase: 'build' | 'listen' = 'build'
  try {
    app = await buildApp(config)
    phase = 'listen'
    const url = await app.listen({ port: config.port, host: config.host })
    app.log.info({ url, database: config.databaseUrl.split(':')[0], auth: config.auth, drafter: config.drafter.kind }, `Tandem listening on ${url}`)
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
