// What the transaction that writes a complete message runs after it: the message triggers' matching
// (src/triggers/message-triggers.ts), attached to the database by buildApp. Chat does not import the triggers
// (they start runs, which write messages): the triggers register here, in the database's context.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { dbContext } from '../db/context.js'
import type { MessageOrigin } from '../triggers/message-triggers.js'
import type { Message } from './schemas.js'

export type MessageWritten = (db: Kysely<Database>, workspaceId: string, message: Message, origin: MessageOrigin | null) => Promise<void>

declare module '../db/context.js' {
  interface DbContext {
    /** Runs in the transaction of every complete message written (attachMessageWritten, by buildApp). */
    messageWritten?: MessageWritten
  }
}

/** Ties what runs after a message is written to the database (buildApp: the message triggers). */
export function attachMessageWritten(db: Kysely<Database>, written: MessageWritten): void {
  dbContext(db).messageWritten = written
}

/** In the writing transaction: the message triggers of this message are matched and queued. */
export async function messageWritten(db: Kysely<Database>, workspaceId: string, message: Message, origin: MessageOrigin | null): Promise<void> {
  const written = dbContext(db).messageWritten
  if (!written) throw new Error('nothing is attached to run after a message is written (attachMessageWritten was not called)')
  await written(db, workspaceId, message, origin)
}
