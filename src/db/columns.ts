// Every column of a table by name, for statements that must not say `*`: PostgreSQL prepares a named statement
// once per connection (db/connect.ts statementName names none with a `*`, whose result a migration adding a
// column would change under a running instance), so a hot read that lists its columns is parsed and planned once.
// The record must name every column of the table (and no other): a column added to the table's type without
// being added here fails the type check.

/** The names of a table's columns, from a record with every column of `T` as a key. */
export function columnsOf<T>(columns: { [K in keyof T]-?: true }): Array<keyof T & string> {
  return Object.keys(columns) as Array<keyof T & string>
}
