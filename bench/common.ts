// What `npm run bench` and `npm run bench:profile` share: starting a server, the seeded workspace, the request
// bodies of the core operations, and one autocannon measurement.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import autocannon from 'autocannon'
import pg from 'pg'
import { freePort } from './free-port.js'

export const CONNECTIONS = 32
export const hasTaskset = spawnSync('taskset', ['-c', '0', 'true']).status === 0
export const json = { 'content-type': 'application/json' }

/** The load generator runs on core 1: re-runs this script pinned there, and exits with its status. */
export function pinToCoreOne(): void {
  if (!hasTaskset || process.env.BENCH_PINNED) return
  const run = spawnSync('taskset', ['-c', '1', process.execPath, ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit', env: { ...process.env, BENCH_PINNED: '1' } })
  process.exit(run.status ?? 1)
}

/** A temporary folder, and the servers started into `children`: at exit the servers are killed and the folder removed. */
export function scratch(prefix: string): { work: string; children: ChildProcess[] } {
  const work = join(tmpdir(), `${prefix}-${process.pid}`)
  mkdirSync(work, { recursive: true })
  const children: ChildProcess[] = []
  process.on('exit', () => {
    for (const child of children) child.kill('SIGKILL')
    rmSync(work, { recursive: true, force: true })
  })
  return { work, children }
}

export interface Server {
  url: string
  child: ChildProcess
}

/** Starts `node <args>` (pinned to `core` when taskset exists) on a free port and waits until it answers (up to a minute: a busy machine). */
export async function start(name: string, core: number | null, args: string[], env: Record<string, string>, children: ChildProcess[]): Promise<Server> {
  const port = await freePort()
  const command = hasTaskset && core !== null ? ['taskset', '-c', String(core), process.execPath, ...args] : [process.execPath, ...args]
  const child = spawn(command[0] as string, command.slice(1), { env: { ...process.env, ...env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'inherit'] })
  children.push(child)
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; i < 1200; i++) {
    try {
      const res = await fetch(`${url}/healthz`)
      if (res.status === 200 || res.status === 404) return { url, child }
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`${name} did not start`)
}

/** Stops a server started by `start` (SIGTERM) and waits for it to exit. */
export async function stop(server: Server): Promise<void> {
  if (server.child.exitCode !== null) return
  const exited = new Promise((resolve) => server.child.once('exit', resolve))
  server.child.kill('SIGTERM')
  await exited
}

export async function call(url: string, method: string, path: string, body?: unknown) {
  const res = await fetch(url + path, { method, headers: json, body: body === undefined ? undefined : JSON.stringify(body) })
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`)
  return res.json() as Promise<unknown>
}

export const AGENT = {
  providerType: 'claude',
  authMode: 'api_key',
  name: 'Research Assistant',
  credentialId: '01890a5d-ac96-774b-bcce-b302099a8057',
  config: { model: 'claude-sonnet', temperature: 0.2, maxTokens: 4096, retries: { count: 3, backoffMs: 250 } },
  instructions: 'Research companies, topics and sources on the web and in internal documents. Cite every source and flag anything uncertain. '.repeat(3),
  templateId: 'research-v2',
  capabilities: { streaming: true, tools: ['web_search', 'read_docs', 'summarise', 'cite'] },
  endpointUrl: 'https://agents.example.com/hooks/research-assistant',
}
const paragraph = (text: string) => ({ type: 'paragraph', children: [{ type: 'text', text }, { type: 'text', text: ' — noted.', style: { italic: true } }] })
export const EDIT = {
  content: {
    blocks: [
      {
        type: 'rich_text',
        elements: [
          paragraph('Thanks for the report. I reproduced the bug on the staging build and traced it to the retry logic in the sync worker.'),
          paragraph('A fix is ready for review: it bounds the retries and logs the failing request id so that support can follow up.'),
          paragraph('I will deploy it tomorrow morning unless someone objects, and update this thread once it is live.'),
        ],
      },
    ],
  },
}
export const PROMPT =
  'When a support ticket arrives, first triage it and set its priority, then draft a friendly reply that answers the question, ' +
  'and have @maria approve the reply before it is sent. After that, translate the reply into the customer\'s language if needed. ' +
  'Finally, summarise the ticket and the outcome in the weekly support metrics chart, and wait for @tom to confirm the summary. ' +
  'Research the customer\'s company when the ticket mentions a contract, and book a follow-up meeting with the account team.'

export interface Seed {
  streamId: string
  messageId: string
  agentId: string
}

/** A stream with one message, and 60 agents. */
export async function seed(url: string): Promise<Seed> {
  const stream = (await call(url, 'POST', '/api/streams', { name: 'bench' })) as { id: string }
  const message = (await call(url, 'POST', `/api/chat/streams/${stream.id}/messages`, EDIT)) as { id: string }
  let agentId = ''
  for (let i = 0; i < 60; i++) agentId = ((await call(url, 'POST', '/api/agents', { ...AGENT, name: `Agent ${i}` })) as { id: string }).id
  return { streamId: stream.id, messageId: message.id, agentId }
}

export interface Scenario {
  name: string
  method: 'GET' | 'POST' | 'PATCH'
  /** Several paths: requests rotate over them (edits of different messages, say). */
  path: (seed: Seed) => string | string[]
  body?: unknown
}

/** The core operations `npm run bench` compares with the floor (drafting aside). */
export const CORE_SCENARIOS: Scenario[] = [
  { name: 'create agent', method: 'POST', path: () => '/api/agents', body: AGENT },
  { name: 'get agent', method: 'GET', path: (s) => `/api/agents/${s.agentId}` },
  { name: 'list agents (50)', method: 'GET', path: () => '/api/agents?limit=50' },
  { name: 'edit message', method: 'PATCH', path: (s) => `/api/chat/messages/${s.messageId}`, body: EDIT },
]

/** `npm run bench`'s drafting scenario (the seeded workspace plus the 12 example agents: 72 agents). */
export const DRAFT_SCENARIO: Scenario = {
  name: `draft (builtin, ${PROMPT.length} chars)`,
  method: 'POST',
  path: (s) => `/api/cycles/streams/${s.streamId}/cycles/draft`,
  body: { mode: 'generate', prompt: PROMPT },
}

export interface Sample {
  rps: number
  p50: number
  p99: number
  errors: number
}

export async function measure(url: string, scenario: Scenario, path: string | string[], seconds: number, connections = CONNECTIONS): Promise<Sample> {
  const paths = [path].flat()
  let next = 0
  const result = await autocannon({
    url: url + paths[0],
    method: scenario.method,
    headers: scenario.body ? json : {},
    body: scenario.body ? JSON.stringify(scenario.body) : undefined,
    connections,
    duration: seconds,
    ...(paths.length > 1 ? { requests: [{ setupRequest: (request: autocannon.Request) => ({ ...request, path: paths[next++ % paths.length] as string }) }] } : {}),
  })
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.timeouts + result.non2xx }
}

export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number

/** A database of its own for a bench's service: its environment, where to seed it, and how to remove it. */
export interface BenchDatabase {
  env: Record<string, string>
  /** The SQLite file, or the PostgreSQL database's URL. */
  location: string
  drop(): Promise<void>
}

/**
 * A SQLite file in `work`, or a PostgreSQL database named `name`, created now (through `adminUrl`, an
 * administrator's URL) and dropped by `drop`; PostgreSQL's service gets a secret key of its own.
 */
export async function benchDatabase(kind: 'sqlite' | 'postgres', name: string, work: string, adminUrl: string): Promise<BenchDatabase> {
  if (kind === 'sqlite') {
    const file = join(work, `${name}.db`)
    return { env: { DATABASE_URL: `sqlite:${file}` }, location: file, drop: async () => {} }
  }
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: adminUrl })
    await client.connect()
    try {
      await client.query(statement)
    } finally {
      await client.end()
    }
  }
  await admin(`drop database if exists ${name}`)
  await admin(`create database ${name}`)
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return {
    env: { DATABASE_URL: url.toString(), TANDEM_SECRET_KEY: randomBytes(32).toString('base64') },
    location: url.toString(),
    drop: () => admin(`drop database if exists ${name} with (force)`),
  }
}
