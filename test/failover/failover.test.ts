// Failover on PostgreSQL: an instance SIGKILLed while it holds a job — a delivery locked but not yet leased, a
// schedule's tick, a decision reminder — and its work is taken over within TANDEM_FAILOVER_S, by an instance
// that was already running or by one started after the kill. The kill is placed by TANDEM_TEST_FAULT
// (src/jobs/faults.ts): every instance carries it, the first to take such a job dies (TANDEM_TEST_FAULT_ONCE),
// and the others never trip it. Every run ends, every tick and reminder takes effect once.
import { after, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request, serverGroup, type ChildServer } from '../child-server.js'
import { dialects, freshDatabase } from '../helpers.js'
import { queuedJobs } from '../queue.js'
import { startAgentServer } from '../runs/agent-server.js'
import { waitFor } from '../wait.js'

const NIL = '00000000-0000-0000-0000-000000000000'
/** The bound under test: stale after 3 s, swept every second (src/failover/registry.ts failoverTimings). */
const BOUND_S = 6

type Mode = 'a live instance' | 'a restart'

/**
 * Instances on a fresh database, all carrying the fault: with 'a live instance', two run from the start; with
 * 'a restart', one runs, and `afterKill` starts another once it died.
 */
// Clusters not closed by their test (one that timed out never reaches its finally): closed when the file ends,
// so no instance outlives the file and holds its process open.
const open = new Set<() => Promise<void>>()
after(async () => {
  for (const close of open) await close()
})

async function cluster(fault: string, mode: Mode) {
  const database = await freshDatabase('postgres', { ownDatabase: true })
  const once = join(tmpdir(), `tandem-fault-${randomUUID()}`)
  const servers = serverGroup(
    { DATABASE_URL: database.url, TANDEM_AUTH: 'local', TANDEM_EGRESS_ALLOW: '127.0.0.0/8', TANDEM_FAILOVER_S: String(BOUND_S), TANDEM_TEST_FAULT: fault, TANDEM_TEST_FAULT_ONCE: once, TANDEM_WORKERS: '2' },
    { stderr: 'ignore' },
  )
  const started: ChildServer[] = [servers.start()]
  if (mode === 'a live instance') started.push(servers.start())
  const bases = await Promise.all(started.map((server) => server.url))
  /**
   * Resolves, once an instance died of the fault, with a live instance's base URL, the time of the death, and the
   * time from which it should take over: the death, or the restart's listening (a restart's own start-up is not
   * failover's).
   */
  const killed = async (): Promise<{ at: number; diedAt: number; base: string }> => {
    const index = await Promise.race([
      ...started.map((server, i) => server.exited.then(() => i)),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no instance died of the fault within 60 s')), 60000).unref()),
    ])
    const diedAt = Date.now()
    assert.equal((await started[index]!.exited).signal, 'SIGKILL', 'the instance died of the fault')
    if (mode === 'a live instance') return { at: diedAt, diedAt, base: bases[1 - index] as string }
    const base = await servers.start().url
    return { at: Date.now(), diedAt, base }
  }
  const close = async () => {
    open.delete(close)
    await servers.stopAll('SIGKILL')
    rmSync(once, { force: true })
    await database.drop()
  }
  open.add(close)
  return { base: bases[0] as string, url: database.url, killed, close }
}

async function peopleCycle(base: string, streamId: string, triggerName: string, policy?: unknown) {
  const phase = { id: randomUUID(), agentId: NIL, goal: 'g', instructions: 'i', autoAdvance: false, phaseName: 'Review', operatorPool: [] }
  const saved = await request(base, 'POST', `/api/cycles/streams/${streamId}/cycles`, { triggerName, description: 'd', phasesTemplate: [phase], ...(policy ? { policy } : {}) })
  assert.equal(saved.status, 201)
}

const events = async (base: string, streamId: string, type: string) =>
  ((await request(base, 'GET', `/api/streams/${streamId}/events?limit=100`)).json.data as Array<{ type: string; data: any }>).filter((e) => e.type === type)

for (const dialect of dialects().filter((d) => d === 'postgres')) {
  for (const mode of ['a live instance', 'a restart'] as const) {
    describe(`failover: a SIGKILLed instance's jobs are taken over by ${mode} (${dialect})`, () => {
      it('a delivery locked but not yet leased: the run succeeds within the bound, its output posted once', { timeout: 120000 }, async () => {
        const agent = await startAgentServer()
        const { base, killed, close } = await cluster('job:runs.deliver:start', mode)
        try {
          const agentId = (await request(base, 'POST', '/api/agents', { name: 'Agent', endpointUrl: agent.url })).json.id
          const streamId = (await request(base, 'POST', '/api/streams', { name: 'deliver' })).json.id
          const phase = { id: randomUUID(), agentId, goal: 'g', instructions: 'i', autoAdvance: true, phaseName: 'Only', operatorPool: [] }
          const cycleId = (await request(base, 'POST', `/api/cycles/streams/${streamId}/cycles`, { triggerName: 't', description: 'd', phasesTemplate: [phase] })).json.id
          const run = (await request(base, 'POST', `/api/cycles/streams/${streamId}/cycles/${cycleId}/runs`, {})).json
          const death = await killed()
          const done = await waitFor(async () => {
            const current = (await request(death.base, 'GET', `/api/runs/${run.id}`)).json
            return current.status === 'succeeded' ? current : undefined
          }, { timeoutMs: 30000, what: 'the run to succeed' })
          const took = Date.now() - death.at
          assert.ok(took < BOUND_S * 1000, `taken over in ${took} ms`)
          assert.equal(done.phases[0].attempts, 1)
          assert.equal(agent.deliveries.length, 1, 'the dead instance never delivered; the live one once')
          const messages = (await request(death.base, 'GET', `/api/chat/streams/${streamId}/messages`)).json.data
          assert.equal(messages.filter((m: any) => m.authorType === 'agent').length, 1)
          console.log(`failover (${mode}): a delivery killed between lock and lease, the run succeeded ${took} ms after the kill (or the restart)`)
        } finally {
          await close()
          await agent.close()
        }
      })

      it('a schedule killed at its tick: it fires again within the bound, each tick once', { timeout: 120000 }, async () => {
        const { base, killed, close } = await cluster('job:schedules.fire:start', mode)
        try {
          const streamId = (await request(base, 'POST', '/api/streams', { name: 'tick' })).json.id
          await peopleCycle(base, streamId, 'tick')
          const schedule = (await request(base, 'POST', `/api/streams/${streamId}/schedules`, { triggerName: 'tick', cron: '*/2 * * * * *' })).json
          assert.ok(schedule.id, `the schedule was refused: ${JSON.stringify(schedule)}`)
          const death = await killed()
          const runsOf = async () => (await request(death.base, 'GET', `/api/cycles/streams/${streamId}/runs?limit=100`)).json.data as Array<{ createdAt: string }>
          await waitFor(async () => (await runsOf()).length >= 1, { timeoutMs: 30000, what: 'the tick after the kill' })
          const took = Date.now() - death.at
          await waitFor(async () => (await runsOf()).length >= 3, { timeoutMs: 30000, what: 'later ticks' })
          assert.equal((await request(death.base, 'PATCH', `/api/schedules/${schedule.id}`, { enabled: false })).status, 200)
          const disabledAt = Date.now()
          const runs = await runsOf()
          assert.ok(took < BOUND_S * 1000, `the killed tick fired ${took} ms after the kill (or the restart)`)
          // The killed tick fires once, late; then one run per tick (every 2 s, the shortest interval a schedule may
          // have): two instances firing a tick, or the killed tick firing twice, would make more runs than ticks.
          // Ticks are counted from the killed one (the instance died as its firing began), not from the first run:
          // fired late, that run can fall in the next tick's window, and the next tick then has a run of its own.
          const firstAt = Math.min(death.diedAt, ...runs.map((run) => Date.parse(run.createdAt)))
          const ticks = 1 + Math.floor(disabledAt / 2000) - Math.floor(firstAt / 2000)
          assert.ok(runs.length <= ticks, `${runs.length} runs for ${ticks} ticks`)
          console.log(`failover (${mode}): a schedule killed at its tick fired again ${took} ms after the kill; ${runs.length} runs for ${ticks} ticks`)
        } finally {
          await close()
        }
      })

      it('a reminder killed as it takes effect: it fires once within the bound, and never again', { timeout: 120000 }, async () => {
        const { base, url, killed, close } = await cluster('job:decision.timer:start', mode)
        try {
          const streamId = (await request(base, 'POST', '/api/streams', { name: 'remind' })).json.id
          await peopleCycle(base, streamId, 'pay', { decision: { remindAfter: 'PT5S' } })
          const [started] = (await request(base, 'POST', `/api/streams/${streamId}/triggers/pay`, {})).json.runs
          const death = await killed()
          await waitFor(async () => (await events(death.base, streamId, 'decision.reminder')).length > 0, { timeoutMs: 30000, what: 'the reminder' })
          const took = Date.now() - death.at
          assert.ok(took < BOUND_S * 1000, `the reminder fired ${took} ms after the kill (or the restart)`)
          // Until no job of the run's timers may run any more: the dead instance's too, once the sweep freed it.
          await waitFor(async () => (await queuedJobs(url, 'decision.timer', started.id)).length === 0, { timeoutMs: 2 * BOUND_S * 1000, what: 'the run\'s timer jobs to be done' })
          assert.equal((await events(death.base, streamId, 'decision.reminder')).length, 1, 'one reminder')
          assert.equal((await request(death.base, 'GET', `/api/runs/${started.id}`)).json.status, 'waiting', 'a reminder decides nothing')
          console.log(`failover (${mode}): a reminder killed as it took effect fired ${took} ms after the kill (or the restart)`)
        } finally {
          await close()
        }
      })
    })
  }
}
