// test lane: clock — server processes killed (SIGKILL) and restarted (scripts/test.mjs).
// Crash safety: a real server process under a concurrent write load is killed with SIGKILL, restarted on
// the same database, and every create or edit it had answered 2xx must be there, with nothing half-written:
// each message's revisions are exactly 1..revision-1 and every acknowledged revision holds its content.
import { describe, it } from 'node:test'
import SqliteDatabase from 'better-sqlite3'
import assert from 'node:assert/strict'
import { request, serverGroup } from './child-server.js'
import { dialects, freshDatabase } from './helpers.js'
import { waitFor } from './wait.js'

const contentOf = (text: string) => ({ blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: [{ type: 'text', text }] }] }] })

for (const dialect of dialects()) {
  describe(`crash safety (${dialect})`, () => {
    it('keeps every acknowledged write across a SIGKILL in the middle of a write load', { timeout: 120000 }, async () => {
      const database = await freshDatabase(dialect, { ownDatabase: true })
      const servers = serverGroup({ DATABASE_URL: database.url, TANDEM_AUTH: 'local' })
      try {
        const first = servers.start()
        const base = await first.url
        const stream = (await request(base, 'POST', '/api/streams', { name: 'crash' })).json
        const messages: string[] = []
        for (let i = 0; i < 5; i++) messages.push((await request(base, 'POST', `/api/chat/streams/${stream.id}/messages`, { content: contentOf(`m${i} v1`) })).json.id)

        const agents = new Map<string, string>() // acknowledged agent id → name
        const revisions = new Map<string, Map<number, string>>(messages.map((id, i) => [id, new Map([[1, `m${i} v1`]])])) // message → revision → text
        let stop = false
        let acknowledged = 0
        const worker = async (w: number) => {
          for (let n = 0; !stop; n++) {
            try {
              if (n % 2 === 0) {
                const name = `agent ${w}-${n}`
                const res = await request(base, 'POST', '/api/agents', { name, config: { worker: w, n } })
                if (res.status === 201) {
                  agents.set(res.json.id, name)
                  acknowledged++
                }
              } else {
                const id = messages[(w + n) % messages.length] as string
                const text = `edit ${w}-${n}`
                const res = await request(base, 'PATCH', `/api/chat/messages/${id}`, { content: contentOf(text) })
                if (res.status === 200) {
                  revisions.get(id)!.set(res.json.revision, text)
                  acknowledged++
                }
              }
            } catch {
              return // the server is gone
            }
          }
        }
        const workers = Array.from({ length: 8 }, (_, w) => worker(w))
        await waitFor(() => acknowledged >= 300, { timeoutMs: 60000, everyMs: 10, what: '300 acknowledged edits' })
        await first.stop('SIGKILL')
        stop = true
        await Promise.all(workers)

        const again = await servers.start().url
        for (const [id, name] of agents) {
          const res = await request(again, 'GET', `/api/agents/${id}`)
          assert.equal(res.status, 200, `acknowledged agent ${id} is missing`)
          assert.equal(res.json.name, name)
        }
        let checkedEdits = 0
        for (const id of messages) {
          const current = (await request(again, 'GET', `/api/chat/messages/${id}`)).json
          const stored = (await request(again, 'GET', `/api/chat/messages/${id}/revisions?limit=100`)).json
          const history = new Map<number, string>([...stored.data.map((r: any) => [r.revision, r.text]), [current.revision, current.text]])
          assert.deepEqual(stored.data.map((r: any) => r.revision), Array.from({ length: current.revision - 1 }, (_, i) => i + 1), 'revisions are exactly 1..revision-1')
          for (const [revision, text] of revisions.get(id)!) {
            assert.equal(history.get(revision), text, `acknowledged revision ${revision} of ${id}`)
            checkedEdits++
          }
        }
        const listed = (await request(again, 'GET', '/api/agents?limit=100')).json
        assert.ok(listed.data.every((a: any) => typeof a.name === 'string' && typeof a.config === 'object'))
        console.log(`crash test (${dialect}): killed after ${acknowledged} acknowledged writes; checked ${agents.size} agents and ${checkedEdits} message revisions after restart`)
      } finally {
        await servers.stopAll()
        await database.drop()
      }
    })
  })
}

/** Every item of a paged list. */
async function everything(base: string, path: string): Promise<unknown[]> {
  const items: unknown[] = []
  let cursor: string | null = null
  do {
    const page: any = (await request(base, 'GET', `${path}?limit=100${cursor ? `&cursor=${cursor}` : ''}`)).json
    items.push(...page.data)
    cursor = page.nextCursor
  } while (cursor)
  return items
}

// SQLite commits concurrent transactions together (src/db/sqlite-driver.ts): killed just before such a COMMIT,
// the process has told nobody of the batch's writes, and none of them is there after a restart.
describe('crash safety of group commit (sqlite)', () => {
  it('a SIGKILL before a batch COMMIT loses only unacknowledged writes, each whole or not at all', { timeout: 120000 }, async () => {
    const database = await freshDatabase('sqlite')
    const servers = serverGroup({ DATABASE_URL: database.url, TANDEM_AUTH: 'local' })
    const faultyServers = serverGroup({ DATABASE_URL: database.url, TANDEM_AUTH: 'local', TANDEM_TEST_FAULT: 'sqlite:before-group-commit' })
    try {
      // Set-up on a server without the fault, so that its own transactions cannot trip it.
      const setup = servers.start()
      let base = await setup.url
      const stream = (await request(base, 'POST', '/api/streams', { name: 'batch' })).json
      const message = (await request(base, 'POST', `/api/chat/streams/${stream.id}/messages`, { content: contentOf('v1') })).json
      await setup.stop()

      const faulty = faultyServers.start()
      base = await faulty.url
      // One at a time, each commits alone (a batch of one is not the fault's): acknowledged.
      const alone = (await request(base, 'POST', '/api/agents', { name: 'alone' })).json.id as string
      // Waves of concurrent writes until one turn of the loop commits several at once (under a loaded machine a
      // wave may arrive one request per turn, each a lone writer).
      const wave = 24
      const outcomes: Array<PromiseSettledResult<{ status: number; json: any }>> = []
      let sent = 0
      for (let w = 0; w < 40 && faulty.child.exitCode === null && faulty.child.signalCode === null; w++) {
        outcomes.push(
          ...(await Promise.allSettled(
            Array.from({ length: wave }, (_, i) =>
              i % 2 === 0
                ? request(base, 'POST', '/api/agents', { name: `together ${sent + i}`, instructions: 'Summarise the thread' })
                : request(base, 'PATCH', `/api/chat/messages/${message.id}`, { content: contentOf(`edit ${sent + i}`) }),
            ),
          )),
        )
        sent += wave
      }
      assert.ok(faulty.child.exitCode !== null || faulty.child.signalCode !== null, `no turn of the loop committed several writes in ${sent} requests`)
      assert.equal((await faulty.exited).signal, 'SIGKILL', 'the fault killed the server at a group commit')
      const answered = outcomes.flatMap((o, i) => (o.status === 'fulfilled' && o.value.status < 300 ? [{ i, json: o.value.json }] : []))
      const acknowledgedAgents = answered.filter((a) => a.i % 2 === 0).map((a) => a.json.id as string)
      const acknowledgedEdits = answered.filter((a) => a.i % 2 === 1).length
      assert.ok(sent - answered.length >= 2, 'the batch being committed (two or more transactions) was not answered')
      console.log(`group commit crash test: killed after ${sent} requests in waves of ${wave}, ${answered.length} answered`)

      // Transactions committed in earlier batches were answered before the next COMMIT; the killed batch left nothing.
      base = await servers.start().url
      const agents = (await everything(base, '/api/agents')) as Array<{ id: string; name: string }>
      const current = (await request(base, 'GET', `/api/chat/messages/${message.id}`)).json
      const events = (await everything(base, `/api/streams/${stream.id}/events`)) as Array<{ type: string }>
      assert.deepEqual(agents.map((a) => a.id).sort(), [alone, ...acknowledgedAgents].sort(), 'every acknowledged agent, and no other')
      assert.equal(current.revision, 1 + acknowledgedEdits, 'every acknowledged edit, and no other')
      assert.equal(events.filter((e) => e.type === 'message.edited').length, acknowledgedEdits, 'one event per stored edit')
      // The drafter's search index holds exactly the committed agents.
      const file = new SqliteDatabase(database.url.slice('sqlite:'.length), { readonly: true })
      const indexed = file.prepare('select agent_id from agent_search order by agent_id').all() as Array<{ agent_id: string }>
      file.close()
      assert.deepEqual(indexed.map((row) => row.agent_id), agents.map((a) => a.id).sort())
    } finally {
      await faultyServers.stopAll('SIGKILL')
      await servers.stopAll()
      await database.drop()
    }
  })
})
