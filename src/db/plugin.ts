// The database as a Fastify plugin: connects, migrates, decorates `app.database` and closes on shutdown.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { connect, type ConnectOptions, type Db } from './connect.js'
import { migrateToLatest } from './migrate.js'

declare module 'fastify' {
  interface FastifyInstance {
    database: Db
  }
}

async function database(app: FastifyInstance, options: { url: string; connect?: ConnectOptions }): Promise<void> {
  const database = connect(options.url, { onWarning: (message, error) => app.log.warn({ err: error }, message), ...options.connect })
  app.decorate('database', database)
  app.addHook('onClose', async () => database.close())
  await migrateToLatest(database)
}

export const databasePlugin = fp(database, { name: 'tandem-database' })
