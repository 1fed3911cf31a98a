// Where a request's CPU goes, by concern: each busy sample of a profile goes to one concern, so the shares add up
// to 100%. `npm run bench:profile` prints it. First the work that calls return from (a function anywhere in the
// stack: the search entry, a savepoint or COMMIT, the event append, drafting, a SQLite statement); then what the
// sample's own frame is (the socket write, JSON parsing, pino, prom-client, a schema validator, serialisation);
// then the innermost of our files in the stack, since Fastify's hooks run the rest of the request nested inside
// the first hook's `next()` (so "anywhere in the stack" would give a hook everything after it); then Fastify.
export interface Frame {
  functionName: string
  url: string
}

const anywhere = (name: RegExp, url?: RegExp) => (stack: Frame[]) => stack.some((f) => name.test(f.functionName) && (!url || url.test(f.url)))

const CALLS: Array<[string, (stack: Frame[]) => boolean]> = [
  ['full-text index (agents\' search entry)', anywhere(/^(indexAgentForSearch|unindexAgentForSearch|runWrites|runBatchWrites)$/)],
  // On SQLite the agents' entries run at the batch's end (runWrites, counted above); FTS5 writes what is pending at
  // a savepoint, so a savepoint opened after a search's early run (runBatchWrites) may still hold index work.
  ['SQLite savepoint and commit', anywhere(/^(beginTransaction|commitTransaction|commitOpenBatch|rollbackTransaction)$/, /sqlite-driver|kysely/)],
  ['event append', anywhere(/^appendEvent$/)],
  ['drafting engine (builtin)', anywhere(/^(draftBuiltin|runOffLoop|searchPlanOffLoop)$/)],
  ['drafting: reading the agents', anywhere(/^(allDraftingAgentsIfFew|listDraftingAgents)$/)],
  ['SQLite statements (row reads and writes)', anywhere(/^(runNow|execute|executeQuery)$/, /sqlite-driver|kysely/)],
]

const LEAVES: Array<[string, (leaf: Frame) => boolean]> = [
  ['socket write and node:http', (f) => /^(writeUtf8String|writev|writeBuffer|writeLatin1String)/.test(f.functionName) || /^node:(_http|http|net|stream|internal\/stream|internal\/streams|_stream|internal\/http)/.test(f.url)],
  ['JSON parsing', (f) => /secure-json-parse/.test(f.url)],
  ['logging (pino)', (f) => /pino/.test(f.url)],
  ['metrics (prom-client)', (f) => /prom-client/.test(f.url)],
  ['validation (schema, numbers, names, rich text)', (f) => !f.url && /^(validate\d*|anonymous\d+)$/.test(f.functionName)],
  ['serialisation', (f) => /fast-json-stringify/.test(f.url)],
]

const OWNERS: Array<[string, RegExp]> = [
  ['security headers', /\/http\/security-headers\.js$/],
  ['key lookup and roles (auth)', /\/http\/auth\.js$/],
  ['validation (schema, numbers, names, rich text)', /\/http\/(json-numbers|names|validation|path-ids)\.js$|\/chat\/richtext\.js$/],
  ['JSON parsing', /\/http\/json-body\.js$/],
  ['idempotency', /\/http\/idempotency\.js$|\/idempotency\//],
  ['metrics (prom-client)', /\/metrics\//],
  ['serialisation', /\/http\/schemas\.js$/],
]

export const CONCERNS = [...new Set([...CALLS.map(([n]) => n), ...LEAVES.map(([n]) => n), ...OWNERS.map(([n]) => n), 'logging (pino)', 'our route code', 'Fastify pipeline (routing, hooks, reply)', 'garbage collector', 'other (Node internals, microtasks, program)'])]

function concernOf(stack: Frame[]): string {
  const leaf = stack[0]!
  for (const [name, test] of CALLS) if (test(stack)) return name
  for (const [name, test] of LEAVES) if (test(leaf)) return name
  if (stack.some((f) => f.functionName === 'createChildLogger')) return 'logging (pino)'
  const owner = stack.find((f) => /\/dist\//.test(f.url))
  if (owner) {
    const hit = OWNERS.find(([, url]) => url.test(owner.url))
    if (hit) return hit[0]
    if (!/fastify|find-my-way|avvio/.test(leaf.url)) return 'our route code'
  }
  if (/fastify|find-my-way|avvio/.test(leaf.url)) return 'Fastify pipeline (routing, hooks, reply)'
  if (leaf.functionName === '(garbage collector)') return 'garbage collector'
  return 'other (Node internals, microtasks, program)'
}

/** Samples per concern (stacks innermost frame first), in CONCERNS order. */
export function byConcern(stacks: Iterable<[Frame[], number]>): Map<string, number> {
  const counts = new Map<string, number>(CONCERNS.map((name) => [name, 0]))
  for (const [stack, count] of stacks) {
    const concern = concernOf(stack)
    counts.set(concern, (counts.get(concern) ?? 0) + count)
  }
  return counts
}
