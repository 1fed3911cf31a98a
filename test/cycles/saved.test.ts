// Saved cycles: POST stores a definition (agents must be the workspace's or nil), GET lists and reads.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, pointers, send } from '../helpers.js'
import { createKey } from '../auth.js'

const NIL = '00000000-0000-0000-0000-000000000000'
const uuid = (n: number) => `01890A5D-AC96-774B-BCCE-${n.toString(16).padStart(12, '0')}`
const phase = (n: number, agentId = NIL) => ({ id: uuid(n), agentId, goal: 'g', instructions: 'i', autoAdvance: true, phaseName: `P${n}`, operatorPool: ['ana'] })

for (const dialect of dialects()) {
  describe(`saved cycles (${dialect})`, () => {
    let app: FastifyInstance
    let streamId: string
    let agentId: string
    before(async () => {
      app = await build(dialect)
      streamId = (await send(app, 'POST', '/api/streams', { name: 'saved' })).json().id
      agentId = (await send(app, 'POST', '/api/agents', { name: 'Worker' })).json().id
    })
    after(() => app.close())

    const save = (body: unknown, headers: Record<string, string> = {}) => send(app, 'POST', `/api/cycles/streams/${streamId}/cycles`, body, headers)

    it('stores a definition (201 + Location) and reads it back with ids in lower case', async () => {
      const res = await save({ triggerName: 'ticket-arrives', description: 'Handle tickets', phasesTemplate: [phase(1, agentId.toUpperCase()), phase(2)] })
      assert.equal(res.statusCode, 201)
      const { warnings, ...saved } = res.json()
      assert.equal(warnings.length, 2, 'no one has the handle ana')
      assert.equal(res.headers.location, `/api/cycles/streams/${streamId}/cycles/${saved.id}`)
      assert.equal(saved.streamId, streamId)
      assert.deepEqual(saved.phasesTemplate.map((p: { id: string; agentId: string }) => [p.id, p.agentId]), [[uuid(1).toLowerCase(), agentId], [uuid(2).toLowerCase(), NIL]])
      assert.deepEqual((await send(app, 'GET', res.headers.location as string)).json(), saved)
      const list = (await send(app, 'GET', `/api/cycles/streams/${streamId}/cycles`)).json()
      assert.deepEqual(list, { data: [saved], nextCursor: null })
    })

    it('agents must belong to the workspace or be nil (422 with pointers); ids must not repeat', async () => {
      const key = (await createKey(app, { workspace: 'elsewhere', name: 'e', role: 'admin' })).headers
      const foreignAgent = (await send(app, 'POST', '/api/agents', { name: 'Foreign' }, key)).json().id
      const res = await save({ triggerName: 't', description: 'd', phasesTemplate: [phase(1), phase(2, foreignAgent), phase(3, '01890a5d-ac96-774b-bcce-000000000999'), phase(1)] })
      assert.equal(res.statusCode, 422)
      assert.deepEqual(pointers(res), ['/phasesTemplate/1/agentId', '/phasesTemplate/2/agentId', '/phasesTemplate/3/id'])
      const list = (await send(app, 'GET', `/api/cycles/streams/${streamId}/cycles`)).json()
      assert.equal(list.data.length, 1, 'nothing stored')
    })

    it('validates like current: required fields and bounds', async () => {
      assert.deepEqual(pointers(await save({ triggerName: 't', description: 'd' })), ['/phasesTemplate'])
      assert.deepEqual(pointers(await save({ triggerName: 't', description: 'd', phasesTemplate: [{ ...phase(1), autoAdvance: 'no' }] })), ['/phasesTemplate/0/autoAdvance'])
      const many = Array.from({ length: 101 }, (_, i) => phase(i + 1))
      assert.deepEqual(pointers(await save({ triggerName: 't', description: 'd', phasesTemplate: many })), ['/phasesTemplate'])
      assert.equal((await save({ triggerName: 't', description: 'd', phasesTemplate: many.slice(0, 100) })).statusCode, 201)
    })

    it('saves a pool naming handles no principal has, with a warning naming each (per phase); an existing handle, in any spelling, warns nothing', async () => {
      await createKey(app, { name: 'Maria', handle: 'maria', role: 'member' })
      // A principal of another workspace does not count.
      await createKey(app, { workspace: 'elsewhere', name: 'Marai', handle: 'marai', role: 'member' })
      const pools = [['@Maria', '@marai'], ['@marai', 'nobody'], ['maria'], []]
      const res = await save({ triggerName: 'pools', description: 'd', phasesTemplate: pools.map((operatorPool, i) => ({ ...phase(i + 1), operatorPool })) })
      assert.equal(res.statusCode, 201)
      const { warnings, id } = res.json()
      assert.deepEqual(warnings.map((w: { code: string; phaseId: string; detail: string }) => [w.code, w.phaseId, w.detail.match(/@[a-z]+/)?.[0]]), [
        ['unknown-operator', uuid(1).toLowerCase(), '@marai'],
        ['unknown-operator', uuid(2).toLowerCase(), '@marai'],
        ['unknown-operator', uuid(2).toLowerCase(), '@nobody'],
      ])
      assert.match(warnings[0].detail, /only the rest of the pool can decide it/)
      assert.match(warnings[1].detail, /no one can decide this phase yet/)
      assert.equal((await send(app, 'GET', `/api/cycles/streams/${streamId}/cycles/${id}`)).json().warnings, undefined, 'warnings belong to the save, not the cycle')
      const clean = await save({ triggerName: 'clean', description: 'd', phasesTemplate: [{ ...phase(9), operatorPool: ['@MARIA'] }] })
      assert.equal(clean.json().warnings, undefined, 'no warnings: the answer is the cycle as GET returns it')
      assert.deepEqual(clean.json(), (await send(app, 'GET', clean.headers.location as string)).json())
      const long = await save({ triggerName: 'long', description: 'd', phasesTemplate: [{ ...phase(1), operatorPool: ['x'.repeat(200)] }] })
      assert.match(long.json().warnings[0].detail, new RegExp(`@${'x'.repeat(64)} `), 'a handle is quoted to its 64 characters, no more')
    })

    it('unknown streams and cycles are 404', async () => {
      const unknown = '01890a5d-ac96-774b-bcce-b302099a8057'
      assert.equal((await send(app, 'POST', `/api/cycles/streams/${unknown}/cycles`, { triggerName: 't', description: 'd', phasesTemplate: [] })).statusCode, 404)
      assert.equal((await send(app, 'GET', `/api/cycles/streams/${unknown}/cycles`)).statusCode, 404)
      assert.equal((await send(app, 'GET', `/api/cycles/streams/${streamId}/cycles/${unknown}`)).statusCode, 404)
    })
  })
}
