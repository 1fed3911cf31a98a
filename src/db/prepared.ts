// Hot queries are built and compiled by Kysely once, then run with new parameters: the typed query
// stays the source of truth and each request skips the query builder and compiler. The query still
// runs through Kysely's driver, so it takes part in transactions and connection locking as usual.
import type { Compilable, CompiledQuery, Kysely, Transaction } from 'kysely'
import type { Database } from './database.js'

const MARKER = '\u0000tandem-parameter-'

type Executor = Kysely<Database> | Transaction<Database>

/**
 * `prepared(2, (db, id, workspaceId) => db.selectFrom(…).where('id', '=', id)…)` gives a function that
 * runs that query on any database or transaction with new values. Each of the `arity` arguments must reach
 * the SQL as a parameter (not be inspected in `build`): it is stood in for by a marker while compiling.
 */
export function prepared<Args extends unknown[], Row>(
  arity: Args['length'],
  build: (db: Kysely<Database>, ...args: Args) => Compilable<Row>,
): (db: Executor, ...args: Args) => Promise<Row[]> {
  // One compilation per dialect: databases and their transactions share their executor's adapter.
  const byAdapter = new WeakMap<object, { compiled: CompiledQuery<Row>; slots: number[] }>()
  const compile = (db: Executor) => {
    const markers = Array.from({ length: arity }, (_, i) => `${MARKER}${i}`) as unknown as Args
    const compiled = build(db, ...markers).compile()
    const slots = compiled.parameters.map((value) => (typeof value === 'string' && value.startsWith(MARKER) ? Number(value.slice(MARKER.length)) : -1))
    for (let i = 0; i < arity; i++) if (!slots.includes(i)) throw new Error(`prepared: argument ${i} does not reach the query as a parameter`)
    return { compiled, slots }
  }
  return async (db, ...args) => {
    const adapter = db.getExecutor().adapter
    let entry = byAdapter.get(adapter)
    if (!entry) {
      entry = compile(db)
      byAdapter.set(adapter, entry)
    }
    const { compiled, slots } = entry
    const parameters = compiled.parameters.map((value, i) => (slots[i] === -1 ? value : args[slots[i] as number]))
    return (await db.executeQuery<Row>({ ...compiled, parameters })).rows
  }
}
