// A bounded memo: the value kept for a key, made on first use; past `limit` entries the oldest kept goes first.
// For caches whose entries cannot go stale (keyed by everything the value derives from): prepared statements by
// SQL text, signing keys by secret, opened secrets by their sealed form.

/** The value `kept` holds for `key`, or `make(key)`, kept (dropping the oldest entry when `limit` are kept). */
export function keptOrMade<K, V>(kept: Map<K, V>, key: K, limit: number, make: (key: K) => V): V {
  const known = kept.get(key)
  if (known !== undefined) return known
  const made = make(key)
  if (kept.size >= limit) kept.delete(kept.keys().next().value as K)
  kept.set(key, made)
  return made
}
