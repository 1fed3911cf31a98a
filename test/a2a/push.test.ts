// test lane: clock — a delivery to a receiver that is down is retried on the real clock until it fails (scripts/test.mjs).
// A2A push notifications through the official SDK's client against a listening Tandem, on both databases, with a
// receiver on 127.0.0.1: the configs' methods and bounds (10 per task, url 2,048 characters, http(s) only), each
// config its maker's, secrets never answered, the deliveries' headers and Standard Webhooks signature (verified
// with the standardwebhooks library), a failed delivery retried with the same webhook-id, a receiver that is down
// never holding up the task, and configs that outlive a restart.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { Webhook as Verifier } from 'standardwebhooks'
import { StreamResponse, TaskState, type Task, type TaskPushNotificationConfig } from '@a2a-js/sdk'
import type { Client } from '@a2a-js/sdk/client'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { TEST_SECRET_KEY, build, dialects, freshDatabase, send } from '../helpers.js'
import { startAgentServer, type AgentServer } from '../runs/agent-server.js'
import { NIL, createAgent, createCycle, createStream, runIn } from '../runs/setup.js'
import { startReceiver, type Received } from '../events/receiver.js'
import { Vault } from '../../src/credentials/vault.js'
import { A2A_PUSH_CREDENTIALS, A2A_PUSH_TOKENS, reseal } from '../../src/credentials/rekey.js'
import { MAX_FINISHED_PUSHES, schedulePushes } from '../../src/a2a/push-delivery.js'
import { expose, keyFor, listen, rpc, sdkClient, userMessage } from './setup.js'
import { bearer } from '../auth.js'
import { waitFor } from '../wait.js'

const ENV = { TANDEM_WORKERS: '2', TANDEM_EGRESS_ALLOW: '127.0.0.0/8', TANDEM_A2A_WAIT_S: '20', TANDEM_WEBHOOK_RETRY_BASE_MS: '1', TANDEM_WEBHOOK_TIMEOUT_MS: '2000' }
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

const sendParams = (text: string, configuration: Record<string, unknown> = {}) =>
  ({ tenant: '', message: userMessage(text), configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true, ...configuration }, metadata: undefined }) as never

const pushConfig = (taskId: string, fields: Partial<TaskPushNotificationConfig> = {}): TaskPushNotificationConfig =>
  ({ tenant: '', id: '', taskId, url: 'http://127.0.0.1:9/hook', token: '', authentication: undefined, ...fields })

const whsec = () => `whsec_${randomBytes(32).toString('base64')}`

/** `read`'s first value `ok` accepts (test/wait.ts waitFor); the failure shows the last one read. */
async function until<T>(read: () => T | Promise<T>, ok: (value: T) => boolean, ms = 20000): Promise<T> {
  let last: T | undefined
  await waitFor(async () => ok((last = await read())), { timeoutMs: ms, everyMs: 20, what: 'a condition' }).catch((error: Error) => {
    throw new Error(`${error.message}; last: ${JSON.stringify(last)}`)
  })
  return last as T
}

async function refused(call: Promise<unknown>, name: string, pattern?: RegExp): Promise<void> {
  await assert.rejects(call, (error: Error) => {
    assert.equal(error.name, name, error.message)
    if (pattern) assert.match(error.message, pattern)
    return true
  })
}

const updateOf = (request: Received) => StreamResponse.fromJSON(JSON.parse(request.body))
const stateOf = (request: Received) => {
  const update = updateOf(request)
  return update.payload?.$case === 'statusUpdate' ? update.payload.value.status?.state : undefined
}

for (const dialect of dialects()) {
  describe(`A2A push notifications (${dialect})`, () => {
    let app: FastifyInstance
    let agent: AgentServer
    let base: string
    let streamId: string
    let agentCycle: string
    let peopleCycle: string
    let ottoKey: string
    let mariaKey: string
    let otto: Client
    let ottoAgent: Client
    let maria: Client

    before(async () => {
      app = await build(dialect, ENV, { ownDatabase: true })
      agent = await startAgentServer()
      const agentId = await createAgent(app, { endpointUrl: agent.url })
      streamId = await createStream(app)
      agentCycle = await createCycle(app, streamId, [{ agentId, autoAdvance: true, name: 'Triage' }], 'triage')
      peopleCycle = await createCycle(app, streamId, [{ agentId: NIL, operatorPool: ['@maria'], name: 'Review' }], 'review')
      ottoKey = await keyFor(app, 'otto')
      mariaKey = await keyFor(app, 'maria')
      base = await listen(app)
      await expose(app, streamId, agentCycle)
      await expose(app, streamId, peopleCycle)
      otto = await sdkClient(base, peopleCycle, ottoKey)
      ottoAgent = await sdkClient(base, agentCycle, ottoKey)
      maria = await sdkClient(base, peopleCycle, mariaKey)
    })
    after(async () => {
      await app.close()
      await agent.close()
    })

    const waitingTask = async () => {
      const task = (await otto.sendMessage(sendParams('Please review'))) as Task
      await runIn(app, task.id, 'waiting')
      return task
    }

    it('the card offers push notifications', async () => {
      const card = (await (await fetch(`${base}/a2a/cycles/${peopleCycle}/.well-known/agent-card.json`)).json()) as { capabilities: Record<string, boolean> }
      assert.equal(card.capabilities.pushNotifications, true)
    })

    it('creates (a UUIDv7 or the given id, which replaces), gets, lists and deletes a caller\'s configs', async () => {
      const task = await waitingTask()
      const made = await otto.createTaskPushNotificationConfig(pushConfig(task.id, { url: 'https://example.com/a2a', token: whsec() }))
      assert.match(made.id, UUID_V7)
      assert.equal(made.taskId, task.id)
      assert.equal(made.url, 'https://example.com/a2a')
      assert.equal(made.token, '')
      const named = await otto.createTaskPushNotificationConfig(pushConfig(task.id, { id: 'mine', url: 'http://example.com/one', authentication: { scheme: 'Bearer', credentials: 'c-1' } }))
      assert.equal(named.id, 'mine')
      assert.deepEqual(named.authentication, { scheme: 'Bearer', credentials: '' })
      const replaced = await otto.createTaskPushNotificationConfig(pushConfig(task.id, { id: 'mine', url: 'http://example.com/two' }))
      assert.equal(replaced.url, 'http://example.com/two')
      assert.equal(replaced.authentication, undefined)
      const got = await otto.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'mine' })
      assert.equal(got.url, 'http://example.com/two')
      const listed = await otto.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' })
      assert.deepEqual(listed.configs.map((c) => c.id).sort(), [made.id, 'mine'].sort())
      assert.equal(listed.nextPageToken, '')
      await otto.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'mine' })
      await refused(otto.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'mine' }), 'TaskNotFoundError')
      await refused(otto.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'mine' }), 'TaskNotFoundError')
      assert.equal((await otto.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' })).configs.length, 1)
      // An unknown task, and a task of another cycle, are unknown (-32001).
      await refused(otto.createTaskPushNotificationConfig(pushConfig('0190a000-0000-7000-8000-000000000000')), 'TaskNotFoundError')
      const other = await rpc(base, agentCycle, 'GetTaskPushNotificationConfig', { taskId: task.id, id: made.id }, bearer(ottoKey))
      assert.equal(other.body.error.code, -32001)
    })

    it('a config is its maker\'s: another caller neither sees, reads, replaces nor deletes it (-32001)', async () => {
      const task = await waitingTask()
      await otto.createTaskPushNotificationConfig(pushConfig(task.id, { id: 'shared-name', url: 'http://example.com/otto' }))
      assert.deepEqual((await maria.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' })).configs, [])
      await refused(maria.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'shared-name' }), 'TaskNotFoundError')
      await refused(maria.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'shared-name' }), 'TaskNotFoundError')
      const raw = await rpc(base, peopleCycle, 'GetTaskPushNotificationConfig', { taskId: task.id, id: 'shared-name' }, bearer(mariaKey))
      assert.equal(raw.body.error.code, -32001)
      // Her config of the same id is her own; Otto's is untouched.
      await maria.createTaskPushNotificationConfig(pushConfig(task.id, { id: 'shared-name', url: 'http://example.com/maria' }))
      assert.equal((await otto.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'shared-name' })).url, 'http://example.com/otto')
      assert.equal((await maria.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'shared-name' })).url, 'http://example.com/maria')
    })

    it('bounds: 10 configs per task (the 11th refused, a replacement still taken), url 2,048 characters, http(s) only (-32602)', async () => {
      const task = await waitingTask()
      for (let i = 0; i < 10; i++) await otto.createTaskPushNotificationConfig(pushConfig(task.id, { id: `c${i}`, url: `http://example.com/${i}` }))
      await refused(otto.createTaskPushNotificationConfig(pushConfig(task.id, { id: 'c10' })), 'RequestMalformedError', /10 push notification configs/)
      await refused(maria.createTaskPushNotificationConfig(pushConfig(task.id)), 'RequestMalformedError', /10 push notification configs/)
      const raw = await rpc(base, peopleCycle, 'CreateTaskPushNotificationConfig', { taskId: task.id, id: 'c11', url: 'http://example.com/11' }, bearer(ottoKey))
      assert.equal(raw.body.error.code, -32602)
      assert.equal((await otto.createTaskPushNotificationConfig(pushConfig(task.id, { id: 'c3', url: 'http://example.com/again' }))).url, 'http://example.com/again')
      assert.equal((await otto.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' })).configs.length, 10)

      const fresh = await waitingTask()
      const prefix = 'https://example.com/'
      const longest = prefix + 'a'.repeat(2048 - prefix.length)
      assert.equal((await otto.createTaskPushNotificationConfig(pushConfig(fresh.id, { url: longest }))).url, longest)
      await refused(otto.createTaskPushNotificationConfig(pushConfig(fresh.id, { url: `${longest}a` })), 'RequestMalformedError', /url is 2049 characters; at most 2048/)
      await refused(otto.createTaskPushNotificationConfig(pushConfig(fresh.id, { url: 'ftp://example.com/hook' })), 'RequestMalformedError', /http or https/)
      await refused(otto.createTaskPushNotificationConfig(pushConfig(fresh.id, { url: 'not a url' })), 'RequestMalformedError', /http or https/)
      await refused(otto.createTaskPushNotificationConfig(pushConfig(fresh.id, { token: 'whsec_!!!' })), 'RequestMalformedError', /token/)
      await refused(otto.createTaskPushNotificationConfig(pushConfig(fresh.id, { authentication: { scheme: 'Bearer', credentials: 'a\r\nx-evil: 1' } })), 'RequestMalformedError', /credentials/)
      assert.equal((await otto.listTaskPushNotificationConfig({ tenant: '', taskId: fresh.id, pageSize: 0, pageToken: '' })).configs.length, 1)
      // SendMessage with a bad config starts nothing.
      const before = (await rpc(base, peopleCycle, 'ListTasks', { pageSize: 1 }, bearer(ottoKey))).body.result.totalSize
      await refused(otto.sendMessage(sendParams('no', { taskPushNotificationConfig: pushConfig('', { url: 'file:///etc/passwd' }) })), 'RequestMalformedError', /configuration\.taskPushNotificationConfig\.url/)
      const afterwards = (await rpc(base, peopleCycle, 'ListTasks', { pageSize: 1 }, bearer(ottoKey))).body.result.totalSize
      assert.equal(afterwards, before)
    })

    it('POSTs each later update with the token, the authorization and a Standard Webhooks signature; secrets are never answered', async () => {
      const receiver = await startReceiver()
      try {
        const token = whsec()
        const credentials = `cred-${randomBytes(12).toString('hex')}`
        const task = (await ottoAgent.sendMessage(sendParams('The printer is on fire', {
          taskPushNotificationConfig: pushConfig('', { id: 'hook', url: receiver.url, token, authentication: { scheme: 'Bearer', credentials } }),
        }))) as Task
        const received = await until(() => receiver.received.slice(), (r) => r.some((q) => stateOf(q) === TaskState.TASK_STATE_COMPLETED) && r.some((q) => updateOf(q).payload?.$case === 'artifactUpdate'))
        const verifier = new Verifier(token)
        for (const request of received) {
          assert.equal(request.headers['content-type'], 'application/a2a+json')
          assert.equal(request.headers.authorization, `Bearer ${credentials}`)
          assert.equal(request.headers['x-a2a-notification-token'], token)
          assert.match(String(request.headers['webhook-id']), UUID_V7)
          verifier.verify(request.body, request.headers as Record<string, string>)
          const update = updateOf(request)
          const taskId = update.payload?.$case === 'statusUpdate' || update.payload?.$case === 'artifactUpdate' ? update.payload.value.taskId : ''
          assert.equal(taskId, task.id)
        }
        assert.throws(() => new Verifier(whsec()).verify(received[0]!.body, received[0]!.headers as Record<string, string>))
        const artifacts = received.map(updateOf).filter((u) => u.payload?.$case === 'artifactUpdate')
        assert.equal(artifacts.length, 1)
        const artifact = artifacts[0]!.payload?.$case === 'artifactUpdate' ? artifacts[0]!.payload.value : undefined
        assert.equal(artifact?.lastChunk, true)
        assert.equal(artifact?.append, false)
        assert.equal(artifact?.artifact?.parts[0]?.content?.$case === 'text' && artifact.artifact.parts[0].content.value, 'done: Triage #1')
        assert.equal(new Set(received.map((r) => r.headers['webhook-id'])).size, received.length, 'one webhook-id per update')
        const final = await ottoAgent.getTask({ tenant: '', id: task.id })
        assert.equal(final.status?.state, TaskState.TASK_STATE_COMPLETED)

        // Nowhere in an answer, an event or a stored row in plain text.
        const answers = [
          await rpc(base, agentCycle, 'GetTaskPushNotificationConfig', { taskId: task.id, id: 'hook' }, bearer(ottoKey)),
          await rpc(base, agentCycle, 'ListTaskPushNotificationConfigs', { taskId: task.id }, bearer(ottoKey)),
          await rpc(base, agentCycle, 'CreateTaskPushNotificationConfig', { taskId: task.id, id: 'again', url: receiver.url, token, authentication: { scheme: 'Bearer', credentials } }, bearer(ottoKey)),
          await rpc(base, agentCycle, 'GetTask', { id: task.id }, bearer(ottoKey)),
          await rpc(base, agentCycle, 'ListTasks', { includeArtifacts: true }, bearer(ottoKey)),
        ].map((a) => JSON.stringify(a.body))
        assert.equal(JSON.parse(answers[0]!).result.authentication.scheme, 'Bearer')
        const events = (await send(app, 'GET', `/api/streams/${streamId}/events?after=0&limit=1000`, undefined, { accept: 'application/json' })).body
        const rows = JSON.stringify(await app.database.db.selectFrom('a2a_push_configs').selectAll().execute())
        for (const text of [...answers, events, rows]) {
          assert.ok(!text.includes(token.slice(6)), 'the token is not there')
          assert.ok(!text.includes(credentials), 'the credentials are not there')
        }
      } finally {
        await receiver.close()
      }
    })

    it('sends a streaming agent\'s message once, whole (lastChunk), never its deltas', async () => {
      const receiver = await startReceiver()
      const streaming = await startAgentServer(async () => {
        const frames = ['Hel', 'lo, ', 'world'].map((delta) => `data: ${JSON.stringify({ delta })}\n\n`).join('')
        return { status: 200, headers: { 'content-type': 'text/event-stream' }, body: `${frames}data: ${JSON.stringify({ output: { text: 'Hello, world' } })}\n\n` }
      })
      try {
        const agentId = await createAgent(app, { name: 'Streamer', endpointUrl: streaming.url, capabilities: { streaming: true } })
        const cycleId = await createCycle(app, streamId, [{ agentId, autoAdvance: true, name: 'Write' }], 'write')
        await expose(app, streamId, cycleId)
        const writer = await sdkClient(base, cycleId, ottoKey)
        await writer.sendMessage(sendParams('Write it', { taskPushNotificationConfig: pushConfig('', { url: receiver.url }) }))
        const received = await until(() => receiver.received.slice(), (r) => r.some((q) => stateOf(q) === TaskState.TASK_STATE_COMPLETED) && r.some((q) => updateOf(q).payload?.$case === 'artifactUpdate'))
        const chunks = received.map(updateOf).flatMap((u) => (u.payload?.$case === 'artifactUpdate' ? [u.payload.value] : []))
        assert.equal(chunks.length, 1)
        const part = chunks[0]?.artifact?.parts[0]?.content
        assert.deepEqual([chunks[0]?.lastChunk, chunks[0]?.append, part?.$case === 'text' && part.value], [true, false, 'Hello, world'])
      } finally {
        await streaming.close()
        await receiver.close()
      }
    })

    it('signs with the credentials when there is no token, and sends unsigned with neither', async () => {
      const receiver = await startReceiver()
      try {
        const task = await waitingTask()
        await otto.createTaskPushNotificationConfig(pushConfig(task.id, { id: 'creds', url: `${receiver.url}?by=creds`, authentication: { scheme: 'Basic', credentials: 'dXNlcjpwYXNz' } }))
        await otto.createTaskPushNotificationConfig(pushConfig(task.id, { id: 'bare', url: `${receiver.url}?by=bare` }))
        await otto.cancelTask({ tenant: '', id: task.id, metadata: undefined })
        const received = await receiver.waitFor(2)
        const byCreds = received.find((r) => r.headers.authorization)!
        const bare = received.find((r) => !r.headers.authorization)!
        assert.equal(byCreds.headers.authorization, 'Basic dXNlcjpwYXNz')
        assert.equal(byCreds.headers['x-a2a-notification-token'], undefined)
        new Verifier(Buffer.from('dXNlcjpwYXNz', 'utf8') as unknown as string, { format: 'raw' }).verify(byCreds.body, byCreds.headers as Record<string, string>)
        assert.equal(bare.headers['webhook-signature'], undefined)
        assert.ok(bare.headers['webhook-id'])
        assert.ok(bare.headers['webhook-timestamp'])
        assert.equal(stateOf(bare), TaskState.TASK_STATE_CANCELED)
        assert.equal(stateOf(byCreds), TaskState.TASK_STATE_CANCELED)
      } finally {
        await receiver.close()
      }
    })

    it('retries a failed delivery with the same webhook-id', async () => {
      const receiver = await startReceiver((_request, index) => (index === 0 ? 500 : 200))
      try {
        const task = await waitingTask()
        const token = whsec()
        await otto.createTaskPushNotificationConfig(pushConfig(task.id, { url: receiver.url, token }))
        await otto.cancelTask({ tenant: '', id: task.id, metadata: undefined })
        const [first, second] = await receiver.waitFor(2)
        assert.equal(first!.headers['webhook-id'], second!.headers['webhook-id'])
        assert.equal(first!.body, second!.body)
        new Verifier(token).verify(second!.body, second!.headers as Record<string, string>)
        const delivery = await until(
          () => app.database.db.selectFrom('a2a_push_deliveries').selectAll().where('run_id', '=', task.id).executeTakeFirstOrThrow(),
          (row) => row.status === 'succeeded',
        )
        assert.equal(Number(delivery.attempts), 2)
        assert.equal(delivery.id, first!.headers['webhook-id'])
      } finally {
        await receiver.close()
      }
    })

    it('a receiver that is down never holds up the task: it completes, and the deliveries fail on their own', async () => {
      const down = await startReceiver()
      await down.close()
      const task = (await ottoAgent.sendMessage(sendParams('Anyone there?', { returnImmediately: false, taskPushNotificationConfig: pushConfig('', { url: down.url }) }))) as Task
      assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED)
      const rows = await until(
        () => app.database.db.selectFrom('a2a_push_deliveries').selectAll().where('run_id', '=', task.id).execute(),
        (r) => r.length > 0 && r.every((row) => row.status === 'failed'),
      )
      for (const row of rows) {
        assert.equal(Number(row.attempts), 8)
        assert.match(String(row.last_error), /connection failed/)
      }
      assert.equal((await ottoAgent.getTask({ tenant: '', id: task.id })).status?.state, TaskState.TASK_STATE_COMPLETED)
    })

    it(`keeps the latest ${MAX_FINISHED_PUSHES} finished deliveries of a config: ${MAX_FINISHED_PUSHES} kept, one more pushes out the oldest`, async () => {
      const receiver = await startReceiver()
      try {
        const task = await waitingTask()
        await otto.createTaskPushNotificationConfig(pushConfig(task.id, { url: receiver.url }))
        const { db } = app.database
        const update = (n: number): StreamResponse => ({ payload: { $case: 'statusUpdate', value: { taskId: task.id, contextId: streamId, status: { state: TaskState.TASK_STATE_AUTH_REQUIRED, timestamp: new Date(n).toISOString(), message: undefined }, metadata: undefined } } })
        const rows = () => db.selectFrom('a2a_push_deliveries').select(['id', 'status']).where('run_id', '=', task.id).orderBy('id').execute()
        await db.transaction().execute((trx) => schedulePushes(trx, task.id, Array.from({ length: MAX_FINISHED_PUSHES }, (_, n) => update(n))))
        await receiver.waitFor(MAX_FINISHED_PUSHES)
        const kept = await until(rows, (r) => r.every((row) => row.status === 'succeeded'))
        assert.equal(kept.length, MAX_FINISHED_PUSHES)
        await db.transaction().execute((trx) => schedulePushes(trx, task.id, [update(MAX_FINISHED_PUSHES)]))
        await receiver.waitFor(MAX_FINISHED_PUSHES + 1)
        const after = await until(rows, (r) => r.every((row) => row.status === 'succeeded') && r.length === MAX_FINISHED_PUSHES)
        assert.ok(!after.some((row) => row.id === kept[0]!.id), 'the oldest went')
      } finally {
        await receiver.close()
      }
    })

    // Last: it re-seals every config of this app under a key its own vault does not have.
    it('credentials rekey re-seals push tokens and credentials under the new key', async () => {
      const task = await waitingTask()
      const token = whsec()
      await otto.createTaskPushNotificationConfig(pushConfig(task.id, { id: 'rekeyed', token, authentication: { scheme: 'Bearer', credentials: 'c-rekey' } }))
      const next = new Vault(randomBytes(32), [Buffer.from(TEST_SECRET_KEY, 'base64')])
      assert.ok((await reseal(app.database.db, next, A2A_PUSH_TOKENS)) >= 1)
      assert.ok((await reseal(app.database.db, next, A2A_PUSH_CREDENTIALS)) >= 1)
      const row = await app.database.db.selectFrom('a2a_push_configs').selectAll().where('run_id', '=', task.id).executeTakeFirstOrThrow()
      assert.equal(row.token_key_id, next.keyId)
      assert.equal(next.open({ keyId: row.token_key_id!, ciphertext: row.token_ciphertext! }, row.id), token)
      assert.equal(next.open({ keyId: row.credentials_key_id!, ciphertext: row.credentials_ciphertext! }, row.id), 'c-rekey')
    })
  })

  describe(`A2A push notifications across a restart (${dialect})`, () => {
    it('configs live in the database: a new instance sends the update with the sealed token', async () => {
      const database = await freshDatabase(dialect, { ownDatabase: true })
      const config = loadConfig({ LOG_LEVEL: 'silent', TANDEM_SECRET_KEY: TEST_SECRET_KEY, ...ENV, DATABASE_URL: database.url })
      const receiver = await startReceiver()
      let app = await buildApp(config, { connect: { schema: database.schema, poolSize: 4 } })
      try {
        const streamId = await createStream(app)
        const cycleId = await createCycle(app, streamId, [{ agentId: NIL, operatorPool: ['@maria'], name: 'Sign' }], 'sign')
        await expose(app, streamId, cycleId)
        const ottoKey = await keyFor(app, 'otto')
        const mariaKey = await keyFor(app, 'maria')
        const token = whsec()
        const client = await sdkClient(await listen(app), cycleId, ottoKey)
        const task = (await client.sendMessage(sendParams('Sign this', { taskPushNotificationConfig: pushConfig('', { id: 'kept', url: receiver.url, token }) }))) as Task
        const waiting = await runIn(app, task.id, 'waiting')
        await app.close()

        app = await buildApp(config, { connect: { schema: database.schema, poolSize: 4 } })
        const again = await sdkClient(await listen(app), cycleId, ottoKey)
        assert.equal((await again.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'kept' })).url, receiver.url)
        const decided = await send(app, 'POST', `/api/runs/${task.id}/phases/${waiting.phases[0].id}/decision`, { decision: 'approve' }, bearer(mariaKey))
        assert.equal(decided.statusCode, 200, decided.body)
        const received = await until(() => receiver.received.slice(), (r) => r.some((q) => stateOf(q) === TaskState.TASK_STATE_COMPLETED))
        const completed = received.find((q) => stateOf(q) === TaskState.TASK_STATE_COMPLETED)!
        assert.equal(completed.headers['x-a2a-notification-token'], token)
        new Verifier(token).verify(completed.body, completed.headers as Record<string, string>)
      } finally {
        await app.close()
        await receiver.close()
        await database.drop()
      }
    })
  })
}
