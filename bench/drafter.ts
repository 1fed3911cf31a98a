// `npm run bench:drafter`: CPU time of the builtin engine per draft, for a realistic 2 KB prompt and for
// prompts from 1 KB to 100 KB (to show that cost grows linearly: no quadratic regular expressions).
// Prompts beyond 100 steps are read whole but only their first 100 steps become phases (our bound).
// Then the service: hostile refines on 100 long-named phases (CPU of the engine, and wall time through the
// route on the worker pool while /healthz is polled), and the median draft in a workspace of 20,000 agents
// (SQLite; PostgreSQL too when BENCH_POSTGRES_URL or TANDEM_TEST_POSTGRES_URL is set).
// BENCH_DRAFTER=scale runs only the last part (the 20,000-agent workspace).
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { buildApp } from '../src/app.js'
import { insertAgent } from '../src/agents/store.js'
import { loadConfig } from '../src/config.js'
import { draftBuiltin } from '../src/drafter/builtin.js'
import { splitSteps, splitTrigger } from '../src/drafter/steps.js'
import { DEFAULT_WORKSPACE } from '../src/workspaces/store.js'
import { ADVERSARIAL, longPhases } from '../test/cycles/fixtures/adversarial.js'
import { freshDatabase, TEST_SECRET_KEY, type Dialect } from '../test/helpers.js'

const examples = JSON.parse(readFileSync(new URL('../test/cycles/fixtures/examples.json', import.meta.url), 'utf8'))
const agents = examples.agents.map((a: { name: string; instructions: string; capabilities?: { tools?: string[] } }, i: number) => ({
  id: `01890a5d-ac96-774b-bcce-${String(i).padStart(12, '0')}`,
  name: a.name,
  instructions: a.instructions,
  tools: a.capabilities?.tools ?? [],
}))

const SENTENCES = [
  'When a support ticket arrives, first triage it, then draft a reply, and finally have @maria approve the reply before it is sent.',
  "Analyst pulls last week's sales numbers and builds a chart.",
  'Then Copywriter turns the findings into a short newsletter.',
  'Research the market for electric bikes, analyse the pricing data, and write a blog post about the findings.',
  'Translate the incoming document into French, then have Editor proofread the translation.',
  'Phone the lead to discuss their needs, then schedule a demo meeting in the sales calendar.',
  'Wait for @finance to confirm before archiving.',
]

function promptOf(bytes: number): string {
  let text = ''
  for (let i = 0; text.length < bytes; i++) text += `${SENTENCES[i % SENTENCES.length]} `
  return text.slice(0, bytes)
}

function cpuMicros(run: () => unknown, prompt: string): number {
  const warm = Math.max(3, Math.round(20000 / prompt.length))
  for (let i = 0; i < warm; i++) run()
  const iterations = Math.max(5, Math.round(2_000_000 / prompt.length))
  const start = process.cpuUsage()
  for (let i = 0; i < iterations; i++) run()
  const used = process.cpuUsage(start)
  return (used.user + used.system) / iterations
}

const onlyScale = process.env.BENCH_DRAFTER === 'scale'

// Warm the JIT on every size before measuring any.
if (!onlyScale) for (const bytes of [2000, 10000, 100000]) for (let i = 0; i < 2_000_000 / bytes; i++) draftBuiltin({ mode: 'generate', prompt: promptOf(bytes), agents })

// Hostile refines (security issue, item 1) on 100 phases with 200-character names: engine CPU per draft.
const hundred = longPhases(agents[0].id)
const HOSTILE = { drops: ADVERSARIAL.drops, calls: ADVERSARIAL.calls, swaps: ADVERSARIAL.swaps } as Record<string, string>
if (!onlyScale) {
  const names = agents.map((a: { name: string }) => a.name.toLowerCase())
  const rows = []
  for (const bytes of [1000, 2000, 10000, 50000, 100000]) {
    const prompt = promptOf(bytes)
    const draft = cpuMicros(() => draftBuiltin({ mode: 'generate', prompt, agents }), prompt)
    const read = cpuMicros(() => splitSteps(splitTrigger(prompt).body, names), prompt)
    rows.push({
      prompt: `generate ${bytes / 1000} KB`,
      steps: splitSteps(splitTrigger(prompt).body, names).length,
      'draft CPU ms': +(draft / 1000).toFixed(3),
      'read steps CPU ms': +(read / 1000).toFixed(3),
      'read µs per KB': +(read / (bytes / 1000)).toFixed(1),
    })
  }
  const refinePrompt = 'Add a step after Draft reply to proofread the reply. Rename Triage to Intake. Move Send reply before Draft reply. Let Translator handle the first phase.'
  const current = draftBuiltin({ mode: 'generate', prompt: promptOf(2000), agents }).draft
  const refine = cpuMicros(() => draftBuiltin({ mode: 'refine', prompt: refinePrompt, current, agents }), refinePrompt)
  rows.push({ prompt: 'refine: 4 instructions on 40 phases', steps: 4, 'draft CPU ms': +(refine / 1000).toFixed(3), 'read steps CPU ms': 0, 'read µs per KB': 0 })
  let worst = { name: '', ms: 0 }
  for (const [name, prompt] of Object.entries(ADVERSARIAL)) {
    for (const mode of ['generate', 'refine'] as const) {
      const micros = cpuMicros(() => draftBuiltin({ mode, prompt, current, agents }), prompt)
      if (micros / 1000 > worst.ms) worst = { name: `${mode} ${name}`, ms: micros / 1000 }
    }
  }
  console.table(rows)
  console.log(`Slowest of ${Object.keys(ADVERSARIAL).length * 2} adversarial 100 KB drafts (test/cycles/adversarial.test.ts): ${worst.name}, ${worst.ms.toFixed(1)} ms CPU`)
  console.log('Only the first 100 steps become phases (our bound); reading the steps touches every byte, so its cost per KB shows the scaling.')

  const hostileRows = Object.entries(HOSTILE).map(([name, prompt]) => ({
    'hostile refine (100 long phases)': name,
    'prompt KB': Math.round(prompt.length / 1000),
    'draft CPU ms': +(cpuMicros(() => draftBuiltin({ mode: 'refine', prompt, current: hundred, agents }), prompt) / 1000).toFixed(1),
  }))
  console.table(hostileRows)
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number
const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))] as number

async function service(dialect: Dialect) {
  const database = await freshDatabase(dialect)
  const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: database.url, TANDEM_AUTH: 'local', TANDEM_SECRET_KEY: TEST_SECRET_KEY }), { connect: { schema: database.schema, poolSize: 4 } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  return { app, url, close: async () => { await app.close(); await database.drop() } }
}

async function post(url: string, body: unknown) {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  return { status: response.status, json: (await response.json()) as { id: string } }
}

// Hostile drafts through the route (worker pool) while /healthz is polled every 5 ms.
if (!onlyScale) {
  const { url, close } = await service('sqlite')
  const stream = (await post(`${url}/api/streams`, { name: 'bench' })).json.id
  await post(`${url}/api/cycles/streams/${stream}/cycles/draft`, { mode: 'generate', prompt: 'Warm up the pool.' })
  // The poller is a separate process, so that the client's own work does not count against the server.
  const poller = spawn(process.execPath, ['-e', `
    const times = []
    let running = true
    process.on('message', () => { running = false })
    ;(async () => {
      while (running) {
        const start = performance.now()
        await fetch('${url}/healthz')
        times.push(performance.now() - start)
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
      process.send(times, () => process.exit(0))
    })()
  `], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const health = new Promise<number[]>((resolve) => poller.once('message', (times) => resolve(times as number[])))
  await new Promise((resolve) => setTimeout(resolve, 300))
  const answers: Array<{ shape: string; status: number; ms: number }> = []
  for (let round = 0; round < 3; round++) {
    for (const [shape, prompt] of Object.entries(HOSTILE)) {
      const start = performance.now()
      const { status } = await post(`${url}/api/cycles/streams/${stream}/cycles/draft`, { mode: 'refine', prompt, current: hundred })
      answers.push({ shape, status, ms: performance.now() - start })
    }
  }
  poller.send('stop')
  const healthTimes = await health
  await close()
  console.log(`Hostile refines through the route (3 rounds × ${Object.keys(HOSTILE).length} shapes): slowest answer ${Math.max(...answers.map((a) => a.ms)).toFixed(0)} ms, statuses ${[...new Set(answers.map((a) => a.status))].join(',')}`)
  console.log(`/healthz meanwhile (another process polling every 5 ms): ${healthTimes.length} requests, median ${median(healthTimes).toFixed(1)} ms, p99 ${percentile(healthTimes, 0.99).toFixed(1)} ms, max ${Math.max(...healthTimes).toFixed(1)} ms`)
}

// A workspace of 20,000 agents: the median time of a draft (HTTP round trip, search + scoring on the pool).
const VOCABULARY = 'account audit billing brand budget calendar campaign catalog claim client code compliance contract cost customer dashboard data deal design document email event expense feedback finance forecast hiring incident inventory invoice lead legal logistics marketing meeting metric onboarding order partner payment payroll pipeline policy pricing product project quote recruiting refund release report request research revenue review risk roadmap sales schedule security shipment signup social software support survey task tax ticket training translation travel vendor video warehouse website'.split(' ')
const ROLES = 'Analyst Assistant Auditor Bot Checker Coordinator Drafter Editor Finder Helper Manager Monitor Planner Reader Reporter Reviewer Scout Sorter Tracker Writer'.split(' ')
const VERBS_FOR_AGENTS = 'analyse check classify compile draft extract file monitor plan prepare reconcile review schedule sort summarise track translate update verify write'.split(' ')
const pick = <T>(list: T[], n: number) => list[n % list.length] as T
const PROMPTS = [
  'When a support ticket arrives, first triage it, then draft a reply, and finally have @maria approve the reply before it is sent.',
  'Research the market for electric bikes, analyse the pricing data, and write a blog post about the findings.',
  'Negotiate the vendor contract, then reconcile the shipment invoices and schedule a review meeting with @ops.',
  'Translate the onboarding document into French, then have Editor proofread the translation.',
]
const postgresUrl = process.env.BENCH_POSTGRES_URL ?? process.env.TANDEM_TEST_POSTGRES_URL
for (const dialect of (postgresUrl ? ['sqlite', 'postgres'] : ['sqlite']) as Dialect[]) {
  if (dialect === 'postgres') process.env.TANDEM_TEST_POSTGRES_URL = postgresUrl
  const { app, url, close } = await service(dialect)
  const db = app.database.db
  const workspace = (await db.selectFrom('workspaces').select('id').where('name', '=', DEFAULT_WORKSPACE).executeTakeFirstOrThrow()).id
  const created = performance.now()
  for (let batch = 0; batch < 20; batch++) {
    await db.transaction().execute(async (trx) => {
      for (let i = batch * 1000; i < (batch + 1) * 1000; i++) {
        const topic = pick(VOCABULARY, i * 7)
        await insertAgent(trx, workspace, {
          name: `${topic[0]?.toUpperCase()}${topic.slice(1)} ${pick(ROLES, i)} ${i}`,
          instructions: `${pick(VERBS_FOR_AGENTS, i * 3)} ${topic} ${pick(VOCABULARY, i * 13)} and ${pick(VERBS_FOR_AGENTS, i * 5)} ${pick(VOCABULARY, i * 17)} for the team.`,
          capabilities: { tools: [`${pick(VOCABULARY, i * 11)}_${pick(VERBS_FOR_AGENTS, i)}`] },
        })
      }
    })
  }
  for (const agent of examples.agents) await insertAgent(db, workspace, agent)
  const setup = performance.now() - created
  const stream = (await post(`${url}/api/streams`, { name: 'bench' })).json.id
  for (const prompt of PROMPTS) await post(`${url}/api/cycles/streams/${stream}/cycles/draft`, { mode: 'generate', prompt })
  const times: number[] = []
  for (let i = 0; i < 100; i++) {
    const start = performance.now()
    const { status } = await post(`${url}/api/cycles/streams/${stream}/cycles/draft`, { mode: 'generate', prompt: pick(PROMPTS, i) })
    times.push(performance.now() - start)
    if (status !== 200) throw new Error(`draft answered ${status}`)
  }
  await close()
  console.log(`${dialect}: 20,000 agents (created in ${(setup / 1000).toFixed(1)} s); 100 drafts: median ${median(times).toFixed(1)} ms, p90 ${percentile(times, 0.9).toFixed(1)} ms, p95 ${percentile(times, 0.95).toFixed(1)} ms`)
}
