// Automation that names a trigger name no saved cycle of its stream has would do nothing when it fires. It is
// saved all the same (a cycle may be saved later), and the answer to its creation says so: `warnings` with one
// `no-matching-cycle`, as a cycle's save answers its own warnings.
import Type, { type TObject, type TProperties } from 'typebox'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { Warning } from '../cycles/schemas.js'
import { findTriggeredCycles } from '../runs/store.js'

/** The created automation's shape with its optional `warnings`. */
export function WithWarnings<T extends TProperties>(schema: TObject<T>, title: string) {
  return Type.Object({ ...schema.properties, warnings: Type.Optional(Type.Array(Warning, { maxItems: 1, description: 'no-matching-cycle: no saved cycle of the stream has this trigger name yet, so firing it starts no run' })) }, { title })
}

export async function noCycleWarnings(trx: Kysely<Database>, workspaceId: string, streamId: string, triggerName: string): Promise<{ warnings?: Warning[] }> {
  const cycles = await findTriggeredCycles(trx, workspaceId, streamId, triggerName, 1)
  if (cycles.length > 0) return {}
  return { warnings: [{ code: 'no-matching-cycle', detail: `No saved cycle of this stream has the trigger name "${triggerName.slice(0, 100)}": until one is saved, this starts no run.` }] }
}
