// Any instance answers any task (PostgreSQL, two instances on one database): a task started through one is read
// and followed (SubscribeToTask) through the other, whose stream sees the decision made through the first.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { TEST_SECRET_KEY, dialects, freshDatabase, send } from '../helpers.js'
import { NIL, createCycle, createStream, runIn } from '../runs/setup.js'
import { expose, keyFor, listen, sdkClient, userMessage } from './setup.js'
import { bearer } from '../auth.js'

if (dialects().includes('postgres')) {
  describe('A2A across instances (postgres)', () => {
    let one: FastifyInstance
    let two: FastifyInstance
    let drop: () => Promise<void>
    before(async () => {
      const database = await freshDatabase('postgres')
      drop = database.drop
      const config = loadConfig({ LOG_LEVEL: 'silent', TANDEM_AUTH: 'local', TANDEM_WORKERS: '0', TANDEM_SECRET_KEY: TEST_SECRET_KEY, DATABASE_URL: database.url })
      one = await buildApp(config, { connect: { schema: database.schema, poolSize: 4 } })
      two = await buildApp(config, { connect: { schema: database.schema, poolSize: 4 } })
      await listen(one)
      await listen(two)
    })
    after(async () => {
      await one.close()
      await two.close()
      await drop()
    })

    it('a task started through one instance is followed through the other to its end', async () => {
      const streamId = await createStream(one)
      const cycleId = await createCycle(one, streamId, [{ agentId: NIL, operatorPool: ['@maria'], name: 'Sign' }], 'sign')
      await expose(one, streamId, cycleId)
      const maria = await keyFor(one, 'maria')
      const otto = await keyFor(one, 'otto')
      const viaOne = await sdkClient(one.listeningOrigin, cycleId, otto)
      const viaTwo = await sdkClient(two.listeningOrigin, cycleId, otto)
      const task = (await viaOne.sendMessage({ tenant: '', message: userMessage('Sign this'), configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true }, metadata: undefined })) as Task
      const waiting = await runIn(one, task.id, 'waiting')
      assert.equal((await viaTwo.getTask({ tenant: '', id: task.id })).status?.state, TaskState.TASK_STATE_AUTH_REQUIRED)
      const events = viaTwo.resubscribeTask({ tenant: '', id: task.id })
      const first = await events.next()
      assert.equal(!first.done && first.value.payload?.$case === 'task' && first.value.payload.value.status?.state, TaskState.TASK_STATE_AUTH_REQUIRED)
      const decided = await send(one, 'POST', `/api/runs/${task.id}/phases/${waiting.phases[0].id}/decision`, { decision: 'approve' }, bearer(maria))
      assert.equal(decided.statusCode, 200, decided.body)
      const rest: StreamResponse[] = []
      for await (const event of events) rest.push(event)
      const last = rest.at(-1)
      assert.equal(last?.payload?.$case === 'statusUpdate' && last.payload.value.status?.state, TaskState.TASK_STATE_COMPLETED)
    })
  })
}
