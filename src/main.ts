// Process entry: configuration → app → listen; SIGTERM/SIGINT finish in-flight requests and close the database.
import { buildApp } from './app.js'
import { ConfigError, loadConfig } from './config.js'

async function main(): Promise<void> {
  let config
  let app
  try {
    config = loadConfig()
    // Start-up can still find the configuration wanting (e.g. an unreadable secret.key).
    app = await buildApp(config)
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`tandem: invalid configuration: ${error.message}`)
      process.exit(1)
    }
    throw error
  }
  const url = await app.listen({ port: config.port, host: config.host })
  app.log.info({ url, database: config.databaseUrl.split(':')[0], auth: config.auth, drafter: config.drafter.kind }, `Tandem listening on ${url}`)

  let closing = false
  const shutdown = async (signal: string) => {
    if (closing) return
    closing = true
    app.log.info({ signal }, 'shutting down')
    await app.close()
    process.exit(0)
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGINT', () => void shutdown('SIGINT'))
}

await main()
