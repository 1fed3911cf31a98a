// A task's history (the caller's messages and every past status message, oldest first, bounded, honouring
// historyLength) and ListTasks' order (last updated first) with its paging, filters and totalSize, through the
// official SDK's client against a listening Tandem, on both databases.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { Role, TaskState, type Task } from '@a2a-js/sdk'
import type { Client } from '@a2a-js/sdk/client'
import { build, dialects, send } from '../helpers.js'
import { NIL, createCycle, createStream, runIn } from '../runs/setup.js'
import { MAX_HISTORY } from '../../src/a2a/task-view.js'
import { expose, keyFor, listen, rpc, sdkClient, userMessage } from './setup.js'
import { bearer } from '../auth.js'

const start = (text: string) =>
  ({ tenant: '', message: userMessage(text), configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true }, metadata: undefined }) as never
const textOf = (m: { parts: Array<{ content?: { $case: string; value?: unknown } | undefined }> }) => {
  const content = m.parts[0]?.content
  return content?.$case === 'text' ? content.value : undefined
}
const list = (client: Client, params: Record<string, unknown> = {}) =>
  client.listTasks({ tenant: '', contextId: '', status: 0, pageToken: '', statusTimestampAfter: undefined, ...params } as never)

for (const dialect of dialects()) {
  describe(`A2A history and ListTasks order (${dialect})`, () => {
    let app: FastifyInstance
    let base: string
    let streamId: string
    let cycleId: string
    let client: Client
    let maria: Record<string, string>
    let otto: Record<string, string>
    let ottoKey: string

    before(async () => {
      app = await build(dialect)
      streamId = await createStream(app)
      cycleId = await createCycle(app, streamId, [
        { agentId: NIL, operatorPool: ['@maria'], name: 'Review' },
        { agentId: NIL, operatorPool: ['@maria'], name: 'Sign' },
      ], 'two-gates')
      await expose(app, streamId, cycleId)
      maria = bearer(await keyFor(app, 'maria'))
      base = await listen(app)
      ottoKey = await keyFor(app, 'otto')
      otto = bearer(ottoKey)
      client = await sdkClient(base, cycleId, ottoKey)
    })
    after(() => app.close())

    async function approve(taskId: string) {
      const run = await runIn(app, taskId, 'waiting')
      const phase = run.phases.find((p: { status: string }) => p.status === 'awaiting_decision')
      const res = await send(app, 'POST', `/api/runs/${taskId}/phases/${phase.id}/decision`, { decision: 'approve' }, maria)
      assert.equal(res.statusCode, 200, res.body)
    }

    it('keeps every past status message, oldest first, with the caller\'s messages; historyLength takes the latest n', async () => {
      const task = (await client.sendMessage(start('Please sign'))) as Task
      await approve(task.id)
      const signing = await client.getTask({ tenant: '', id: task.id })
      assert.equal(textOf(signing.status!.message!), 'Waiting for @maria to decide "Sign".')
      await rpc(base, cycleId, 'SendMessage', { message: { messageId: 'note-1', role: 'ROLE_USER', taskId: task.id, parts: [{ text: 'Any news?' }] } }, otto)
      await approve(task.id)
      await runIn(app, task.id, 'succeeded')
      const done = await client.getTask({ tenant: '', id: task.id })
      assert.equal(done.status?.state, TaskState.TASK_STATE_COMPLETED)
      assert.deepEqual(done.history.map((m) => [m.role, textOf(m)]), [
        [Role.ROLE_USER, 'Please sign'],
        [Role.ROLE_AGENT, 'Waiting for @maria to decide "Review".'],
        [Role.ROLE_AGENT, 'Waiting for @maria to decide "Sign".'],
        [Role.ROLE_USER, 'Any news?'],
      ])
      const review = done.history[1]!
      assert.equal(review.metadata?.tandem.waitingFor, 'decision')
      assert.equal(review.metadata?.tandem.phaseName, 'Review')
      assert.equal(review.taskId, task.id)
      assert.equal(new Set(done.history.map((m) => m.messageId)).size, 4, 'each message its own id')
      // The current status message is the one recorded: the same id and time in the status and the history.
      const waiting = (await client.sendMessage(start('Another'))) as Task
      const read = await client.getTask({ tenant: '', id: waiting.id })
      assert.equal(read.history.at(-1)?.messageId, read.status?.message?.messageId)
      assert.deepEqual((await client.getTask({ tenant: '', id: task.id, historyLength: 2 })).history.map(textOf), ['Waiting for @maria to decide "Sign".', 'Any news?'])
      assert.deepEqual((await client.getTask({ tenant: '', id: task.id, historyLength: 0 })).history, [])
    })

    it(`keeps at most ${MAX_HISTORY} status messages per task: the oldest go`, async () => {
      const task = (await client.sendMessage(start('Bounded'))) as Task
      const { db } = app.database
      // One short of the bound as if recorded earlier (older than the real one), then a real change adds one more.
      const rows = Array.from({ length: MAX_HISTORY - 1 }, (_, i) => ({
        id: `00000000-0000-7000-8000-${String(i).padStart(12, '0')}`, run_id: task.id, message_id: `old-${i}`, role: 'agent' as const,
        text: `old ${i}`, created_at: '2026-01-01T00:00:00.000Z', state: 'TASK_STATE_WORKING', meta: null,
      }))
      await db.insertInto('a2a_task_messages').values(rows).execute()
      const agentRows = () => db.selectFrom('a2a_task_messages').select('message_id').where('run_id', '=', task.id).where('role', '=', 'agent').orderBy('id').execute()
      assert.equal((await agentRows()).length, MAX_HISTORY, 'at the bound: nothing dropped')
      await approve(task.id)
      const kept = await agentRows()
      assert.equal(kept.length, MAX_HISTORY)
      assert.equal(kept[0]?.message_id, 'old-1', 'the oldest went')
      const read = await client.getTask({ tenant: '', id: task.id })
      assert.equal(read.history.length, MAX_HISTORY)
      assert.equal(textOf(read.history.at(-1)!), 'Waiting for @maria to decide "Sign".')
    })

    it('ListTasks: last updated first, paged to the end, filtered by state and time, totalSize of all pages', async () => {
      const other = await createCycle(app, streamId, [{ agentId: NIL, operatorPool: ['@maria'], name: 'Review' }, { agentId: NIL, operatorPool: ['@maria'], name: 'Sign' }], 'listed')
      await expose(app, streamId, other)
      const lister = await sdkClient(base, other, ottoKey)
      const ids: string[] = []
      for (const text of ['one', 'two', 'three']) ids.push(((await lister.sendMessage(start(text))) as Task).id)
      const [one, two, three] = ids as [string, string, string]
      assert.deepEqual((await list(lister)).tasks.map((t) => t.id), [three, two, one], 'newest first while none changed')
      const mark = new Date().toISOString()
      await approve(one)
      const all = await list(lister)
      assert.deepEqual(all.tasks.map((t) => t.id), [one, three, two], 'the task changed last comes first')
      assert.equal(all.totalSize, 3)
      assert.equal(all.nextPageToken, '')
      const seen: string[] = []
      let pageToken = ''
      for (let page = 0; page < 5; page++) {
        const res = await list(lister, { pageSize: 2, pageToken })
        assert.equal(res.totalSize, 3)
        seen.push(...res.tasks.map((t) => t.id))
        pageToken = res.nextPageToken
        if (pageToken === '') break
      }
      assert.deepEqual(seen, [one, three, two])
      const after = await list(lister, { statusTimestampAfter: mark })
      assert.deepEqual([after.tasks.map((t) => t.id), after.totalSize], [[one], 1])
      await lister.cancelTask({ tenant: '', id: two, metadata: undefined })
      const canceled = await list(lister, { status: TaskState.TASK_STATE_CANCELED })
      assert.deepEqual([canceled.tasks.map((t) => t.id), canceled.totalSize], [[two], 1])
      const waiting = await list(lister, { status: TaskState.TASK_STATE_AUTH_REQUIRED, pageSize: 1 })
      assert.deepEqual([waiting.tasks.map((t) => t.id), waiting.totalSize], [[one], 2])
      assert.notEqual(waiting.nextPageToken, '')
      const bad = await rpc(base, other, 'ListTasks', { statusTimestampAfter: 'yesterday' }, otto)
      assert.equal(bad.body.error.code, -32602)
    })

  })
}
