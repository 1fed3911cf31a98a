// Hot queries are built and compiled by Kysely once, then run with new parameters: the typed query
// stays the source of truth and each request skips the query builder and compiler. On SQLite the compiled
// query runs at once when the connection is the caller's or free (sqlite-driver.ts runNow), else through
// Kysely's executor, so it takes part in transactions and connection locking as usual.
//
// Sound by construction:
// - `build` receives its arguments as Kysely expressions (`Expression<T>`), not values: it can place them
//   in the query but cannot branch on them, so nothing about one call's values is frozen into the SQL;
// - every argument must reach the SQL as a parameter (checked when compiling);
// - compiled SQL is kept per dialect adapter and only for an executor without plugins: a `withSchema(…)`
//   or any other plugin changes the SQL, so such an executor compiles the query each time instead of
//   reusing SQL compiled without it.
import { sql, type Compilable, type CompiledQuery, type Expression, type Kysely, type RawBuilder } from 'kysely'
import type { Database } from './database.js'
import { sqliteDriverOf } from './sqlite-driver.js'

const MARKER = '\u0000tandem-parameter-'

/** The arguments as `build` sees them: expressions standing for the values of each call. */
export type Parameters<Args extends unknown[]> = { [K in keyof Args]: Expression<Args[K]> }

/**
 * `prepared(2, (db, id: Expression<string>, workspaceId: Expression<string>) => db.selectFrom(…).where('id', '=', id)…)`
 * gives `(db, id: string, workspaceId: string) => Promise<Row[]>`, which runs that query on any database
 * or transaction with new values.
 */
export function prepared<Args extends unknown[], Row>(
  arity: Args['length'],
  build: (db: Kysely<Database>, ...args: Parameters<Args>) => Compilable<Row>,
): (db: Kysely<Database>, ...args: Args) => Promise<Row[]> {
  const byAdapter = new WeakMap<object, { compiled: CompiledQuery<Row>; slots: number[] }>()
  const compile = (db: Kysely<Database>) => {
    const markers = Array.from({ length: arity }, (_, i) => sql.val(`${MARKER}${i}`)) as unknown as Parameters<Args>
    const compiled = build(db, ...markers).compile()
    const slots = compiled.parameters.map((value) => (typeof value === 'string' && value.startsWith(MARKER) ? Number(value.slice(MARKER.length)) : -1))
    for (let i = 0; i < arity; i++) if (!slots.includes(i)) throw new Error(`prepared: argument ${i} does not reach the query as a parameter`)
    return { compiled, slots }
  }
  const run = async (db: Kysely<Database>, entry: { compiled: CompiledQuery<Row>; slots: number[] }, args: Args) => {
    const { compiled, slots } = entry
    const query = { ...compiled, parameters: compiled.parameters.map((value, i) => (slots[i] === -1 ? value : args[slots[i] as number])) }
    // SQLite: at once, without Kysely's asynchronous layers, when the connection is the caller's or free.
    const now = sqliteDriverOf(db)?.runNow<Row>(db.isTransaction, query)
    return (now ?? (await db.executeQuery<Row>(query))).rows
  }
  return async (db, ...args) => {
    const executor = db.getExecutor()
    if (executor.plugins.length > 0) return run(db, compile(db), args)
    let entry = byAdapter.get(executor.adapter)
    if (!entry) {
      entry = compile(db)
      byAdapter.set(executor.adapter, entry)
    }
    return run(db, entry, args)
  }
}

/** A raw statement (sql`…`) as `build` may return it: compiled against the database it was built for. */
export function rawStatement<Row>(db: Kysely<Database>, statement: RawBuilder<Row>): Compilable<Row> {
  return { compile: () => statement.compile(db) }
}
