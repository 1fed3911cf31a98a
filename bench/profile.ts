// `npm run bench:profile -- <scenario>`: a CPU profile of the service (production build, SQLite in a temporary
// file, pinned to core 0) under the load `npm run bench` puts on it (32 connections, from core 1), sampled over
// the measured window only: the profiler is started and stopped through the inspector after the seed and the
// warm-up. Scenarios: create, get, list, edit (CORE_SCENARIOS by their first word), draft (npm run bench's, over
// its 72 agents); or a .cpuprofile file to read.
// Prints where the CPU went: by part (SQLite, HTTP, Fastify, Kysely, our own files…), the heaviest functions by
// self time, the share of each concern (bench/concerns.ts), and the call tree as an indented flame graph (inclusive share of busy samples, branches ≥ BENCH_TREE_MIN %).
// Writes bench/results/<scenario>.cpuprofile (Chrome DevTools, speedscope) and <scenario>.folded (flamegraph.pl).
// Settings: BENCH_SECONDS (default 5), BENCH_NO_BUILD=1, BENCH_TREE_MIN (default 1.5), BENCH_INTERVAL_US (default 200).
import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import WebSocket from 'ws'
import { call, CORE_SCENARIOS, DRAFT_SCENARIO, measure, pinToCoreOne, scratch, seed, start } from './common.js'
import { freePort } from './free-port.js'
import { byConcern, type Frame } from './concerns.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const TREE_MIN = Number(process.env.BENCH_TREE_MIN ?? 1.5)
const INTERVAL_US = Number(process.env.BENCH_INTERVAL_US ?? 200)
const wanted = process.argv[2] ?? ''
// A profile written elsewhere (node --cpu-prof, e.g. bench:runs with BENCH_SERVICE_NODE_ARGS): read it the same way.
if (wanted.endsWith('.cpuprofile')) {
  print(analyse(JSON.parse(readFileSync(wanted, 'utf8')) as Profile))
  process.exit(0)
}
const SCENARIOS = [...CORE_SCENARIOS, DRAFT_SCENARIO]
const scenario = SCENARIOS.find((s) => s.name.startsWith(wanted))
if (!wanted || !scenario) {
  console.error(`usage: npm run bench:profile -- <${SCENARIOS.map((s) => s.name.split(' ')[0]).join('|')}|file.cpuprofile>`)
  process.exit(2)
}
const label = scenario.name.split(' ')[0] as string

pinToCoreOne()
const { work, children } = scratch('tandem-profile')

interface CallFrame {
  functionName: string
  url: string
  lineNumber: number
}
interface ProfileNode {
  id: number
  callFrame: CallFrame
  children?: number[]
}
interface Profile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
  startTime: number
  endTime: number
}

/** A minimal Chrome DevTools Protocol client over the inspector's WebSocket. */
async function inspector(port: number) {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>
  const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl)
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject))
  let nextId = 1
  const pending = new Map<number, (result: unknown) => void>()
  socket.on('message', (data) => {
    const message = JSON.parse(String(data)) as { id?: number; result?: unknown; error?: unknown }
    if (message.id !== undefined) pending.get(message.id)?.(message.error ? Promise.reject(new Error(JSON.stringify(message.error))) : message.result)
  })
  return {
    send: (method: string, params: object = {}) =>
      new Promise<unknown>((resolve) => {
        const id = nextId++
        pending.set(id, resolve)
        socket.send(JSON.stringify({ id, method, params }))
      }),
    close: () => socket.close(),
  }
}

/** What part of the program a frame belongs to. */
function partOf(frame: CallFrame): string {
  const { url, functionName } = frame
  if (!url) {
    if (functionName.startsWith('(')) return functionName
    // Native functions: better-sqlite3's statement methods show up with no URL.
    if (/^(run|all|get|iterate|prepare|exec)$/.test(functionName)) return 'SQLite (native)'
    return `native: ${functionName}`
  }
  if (url.startsWith('node:')) {
    const module = url.slice(5).split('/')[1] ?? url.slice(5)
    return `node:${module.startsWith('_http') || module === 'http' ? 'http' : module.startsWith('_stream') || module.startsWith('streams') ? 'stream' : module}`
  }
  const inModules = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)
  if (inModules) return inModules[1] as string
  const own = /\/dist\/src\/(.+)$/.exec(url)
  return own ? `tandem: ${own[1]}` : url
}

/**
 * CPU the process has used, in seconds (user and system, all threads; Linux' /proc, in clock ticks of 1/100 s):
 * the figure load disturbs least, since a server that gets less of its core answers fewer requests too.
 */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

function analyse(profile: Profile) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const self = new Map<number, number>()
  for (const id of profile.samples) self.set(id, (self.get(id) ?? 0) + 1)
  const isIdle = (id: number) => byId.get(id)!.callFrame.functionName === '(idle)'
  const busy = profile.samples.filter((id) => !isIdle(id)).length
  const pct = (n: number) => `${((100 * n) / busy).toFixed(1).padStart(5)}%`

  const parts = new Map<string, number>()
  const functions = new Map<string, number>()
  for (const [id, count] of self) {
    if (isIdle(id)) continue
    const frame = byId.get(id)!.callFrame
    parts.set(partOf(frame), (parts.get(partOf(frame)) ?? 0) + count)
    const name = `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*\/(node_modules|dist)\//, '')}:${frame.lineNumber + 1}`
    functions.set(name, (functions.get(name) ?? 0) + count)
  }
  const top = (map: Map<string, number>, n: number) => [...map].sort((a, b) => b[1] - a[1]).slice(0, n)

  // The call tree, merged by frame along each path (the same function called from two places stays two nodes).
  interface TreeNode {
    name: string
    total: number
    children: Map<string, TreeNode>
  }
  const root: TreeNode = { name: '(root)', total: 0, children: new Map() }
  const folded = new Map<string, number>()
  const stacks: Array<[Frame[], number]> = []
  for (const [id, count] of self) {
    if (isIdle(id)) continue
    const path: string[] = []
    const stack: Frame[] = []
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame
      if (frame.functionName === '(root)') break
      path.push(`${frame.functionName || '(anonymous)'} [${partOf(frame)}]`)
      stack.push(frame)
    }
    stacks.push([stack, count])
    path.reverse()
    folded.set(path.join(';'), (folded.get(path.join(';')) ?? 0) + count)
    let node = root
    root.total += count
    for (const name of path) {
      let child = node.children.get(name)
      if (!child) node.children.set(name, (child = { name, total: 0, children: new Map() }))
      child.total += count
      node = child
    }
  }
  const tree: string[] = []
  const walk = (node: TreeNode, depth: number) => {
    for (const child of [...node.children.values()].sort((a, b) => b.total - a.total)) {
      if ((100 * child.total) / busy < TREE_MIN) continue
      // A chain of single children is printed on one line, so that the tree stays readable.
      let chain = child
      const names = [child.name]
      while (chain.children.size === 1) {
        const only = [...chain.children.values()][0]!
        if (only.total !== chain.total) break
        names.push(only.name)
        chain = only
      }
      tree.push(`${pct(child.total)} ${'  '.repeat(depth)}${names.length > 3 ? `${names[0]} → … → ${names.at(-1)}` : names.join(' → ')}`)
      walk(chain, depth + 1)
    }
  }
  walk(root, 0)
  return {
    busy,
    idle: profile.samples.length - busy,
    parts: top(parts, 25).map(([name, n]) => `${pct(n)}  ${name}`),
    functions: top(functions, 30).map(([name, n]) => `${pct(n)}  ${name}`),
    tree,
    concerns: [...byConcern(stacks)].map(([name, n]) => `${pct(n)}  ${name}`),
    folded: [...folded].map(([stack, n]) => `${stack} ${n}`).join('\n'),
  }
}

function print(result: ReturnType<typeof analyse>) {
  console.log(`samples: ${result.busy} busy, ${result.idle} idle (${((100 * result.busy) / (result.busy + result.idle)).toFixed(0)}% of the thread busy)`)
  console.log('\nby concern (each sample to the first concern its stack matches, bench/concerns.ts):')
  for (const line of result.concerns) console.log(`  ${line}`)
  console.log('\nself time by part (share of busy samples):')
  for (const line of result.parts) console.log(`  ${line}`)
  console.log('\nheaviest functions (self):')
  for (const line of result.functions) console.log(`  ${line}`)
  console.log(`\ncall tree (inclusive, branches ≥ ${TREE_MIN}%):`)
  for (const line of result.tree) console.log(`  ${line}`)
}

if (!process.env.BENCH_NO_BUILD) {
  console.log('building…')
  if (spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' }).status !== 0) throw new Error('build failed')
}
const inspectPort = await freePort()
const service = await start('service', 0, [`--inspect=127.0.0.1:${inspectPort}`, 'dist/main.js'], {
  NODE_ENV: 'production',
  DATABASE_URL: `sqlite:${join(work, 'service.db')}`,
  TANDEM_AUTH: 'local',
  LOG_LEVEL: 'info',
}, children)
const seeded = await seed(service.url)
if (scenario === DRAFT_SCENARIO) {
  const examples = JSON.parse(readFileSync(new URL('../test/cycles/fixtures/examples.json', import.meta.url), 'utf8')) as { agents: unknown[] }
  for (const agent of examples.agents) await call(service.url, 'POST', '/api/agents', agent)
}
const path = scenario.path(seeded)
await measure(service.url, scenario, path, Math.max(1, Math.round(SECONDS / 2)))
const cdp = await inspector(inspectPort)
await cdp.send('Profiler.enable')
await cdp.send('Profiler.setSamplingInterval', { interval: INTERVAL_US })
await cdp.send('Profiler.start')
const cpuBefore = cpuSeconds(service.child.pid!)
const sample = await measure(service.url, scenario, path, SECONDS)
const cpuAfter = cpuSeconds(service.child.pid!)
const { profile } = (await cdp.send('Profiler.stop')) as { profile: Profile }
cdp.close()
service.child.kill('SIGTERM')

const result = analyse(profile)
mkdirSync('bench/results', { recursive: true })
writeFileSync(`bench/results/${label}.cpuprofile`, JSON.stringify(profile))
writeFileSync(`bench/results/${label}.folded`, `${result.folded}\n`)
console.log(`\n${scenario.name}: ${Math.round(sample.rps)} req/s, p50 ${sample.p50} ms, p99 ${sample.p99} ms, ${sample.errors} errors (profiled, ${INTERVAL_US} µs sampling)`)
console.log(`CPU per request: ${((1e6 * (cpuAfter - cpuBefore)) / (sample.rps * SECONDS)).toFixed(0)} µs (the service's process, all its threads, profiler included)`)
print(result)
console.log(`\nwritten: bench/results/${label}.cpuprofile, bench/results/${label}.folded`)
process.exit(0)
