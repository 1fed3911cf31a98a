// How appended events wake the readers of a stream. PostgreSQL: a NOTIFY on one channel, payload
// "<streamId>:<id>", delivered at commit to every instance. SQLite (one process): an in-process emitter.
// A wake-up is only a hint: readers always read the rows from the table.
import { EventEmitter } from 'node:events'

export const EVENTS_CHANNEL = 'tandem_events'

const local = new EventEmitter()
local.setMaxListeners(0)

export function wakeLocally(streamId: string): void {
  local.emit('wake', streamId)
}

export function onLocalWake(listener: (streamId: string) => void): () => void {
  local.on('wake', listener)
  return () => local.off('wake', listener)
}
