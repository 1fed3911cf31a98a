// The checkpointer's thread (checkpointer.ts): its own connection to the SQLite file, on which it copies the
// write-ahead log back into the database when asked. PASSIVE: it never waits for the writer, nor blocks it.
import { parentPort, workerData } from 'node:worker_threads'
import Database from 'better-sqlite3'

const port = parentPort as NonNullable<typeof parentPort>
const db = new Database((workerData as { path: string }).path, { fileMustExist: true })

port.on('message', (message: 'checkpoint' | 'close') => {
  if (message === 'close') {
    db.close()
    port.close()
    return
  }
  try {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)') as Array<{ busy: number; log: number; checkpointed: number }>
    port.postMessage({ done: result })
  } catch (error) {
    port.postMessage({ error: (error as Error).message })
  }
})
