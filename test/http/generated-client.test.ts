// The OpenAPI document is the contract: a client generated from the served /openapi.json (openapi-typescript's
// types, openapi-fetch's client) runs the README's walk-through with no type written by hand — an agent, a cycle
// drafted and saved, a message posted and edited with If-Match (the ETag read through the generated response
// headers, a stale one a typed 412 problem), a run approved — then uploads an image as raw bytes and reads the
// events, each `data` typed by its `type`. The types are web/src/api/schema.d.ts (`npm run gen:api`); the test
// first checks that the served document generates exactly them, so that this file's typecheck is the proof.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import createClient from 'openapi-fetch'
import type { paths } from '../../web/src/api/schema.js'
import { SCHEMA_FILE, typesOf } from '../../scripts/openapi-types.js'
import { build } from '../helpers.js'
import { startAgentServer, waitFor, type AgentServer } from '../runs/agent-server.js'
import { png } from '../assets/images.js'

type MessageHeaders = paths['/api/chat/messages/{id}']['get']['responses'][200]['headers']
type PostedHeaders = paths['/api/chat/streams/{streamId}/messages']['post']['responses'][201]['headers']

const paragraph = (text: string) => ({ blocks: [{ type: 'rich_text' as const, elements: [{ type: 'paragraph' as const, children: [{ type: 'text' as const, text }] }] }] })

describe('a client generated from /openapi.json', () => {
  let app: FastifyInstance
  let agent: AgentServer
  let baseUrl: string
  before(async () => {
    agent = await startAgentServer((delivery) => ({ status: 200, body: { output: { text: `Summary of ${JSON.stringify(delivery.body.run.input)}` } } }))
    app = await build('sqlite', { TANDEM_EGRESS_ALLOW: '127.0.0.0/8' })
    await app.listen({ port: 0, host: '127.0.0.1' })
    baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  })
  after(async () => {
    await app.close()
    await agent.close()
  })

  it('the served document generates exactly the committed types (npm run gen:api)', async () => {
    const served: any = await (await fetch(`${baseUrl}/openapi.json`)).json()
    assert.equal(await typesOf(served), readFileSync(SCHEMA_FILE, 'utf8'))
    // What a generated client needs, stated in the document itself.
    assert.deepEqual(served.paths['/healthz'].get.security, [])
    assert.deepEqual(served.paths['/hooks/{hookId}'].post.security, [])
    assert.ok(served.paths['/api/streams/{streamId}/events'].get.parameters.some((p: { in: string; name: string }) => p.in === 'header' && p.name === 'Last-Event-ID'))
    assert.ok(served.paths['/api/mcp-servers/{id}/tools'].get.responses['502'])
    assert.ok(served.components.schemas.MessageDelta)
    const createStream = served.paths['/api/streams'].post.responses
    assert.deepEqual(Object.keys(createStream['201'].headers).sort(), ['Idempotent-Replayed', 'Location'])
    assert.ok(createStream['409'].headers['Retry-After'] && createStream['429'].headers['Retry-After'])
    assert.ok(served.components.schemas.StreamEvent.discriminator.mapping['run.updated'])
    assert.equal(served.components.schemas.Problem.properties.instance, undefined, 'never sent, so not declared')
    assert.equal(served.paths['/api/assets'].post.requestBody.content['image/png'].schema.format, 'binary')
  })

  it('runs the README walk-through with the generated types only, reading the ETag through them', { timeout: 30000 }, async () => {
    const api = createClient<paths>({ baseUrl })
    const credential = await api.POST('/api/credentials', { body: { name: 'Demo agent secret', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' } })
    assert.ok(credential.data, JSON.stringify(credential.error))
    const created = await api.POST('/api/agents', { body: { name: 'Summariser', instructions: 'Summarises requests', providerType: 'custom_webhook', endpointUrl: `${agent.url}/`, credentialId: credential.data.id } })
    assert.ok(created.data, JSON.stringify(created.error))
    assert.equal(created.response.headers.get('location'), `/api/agents/${created.data.id}`)

    const stream = await api.POST('/api/streams', { body: { name: 'Support' } })
    assert.ok(stream.data)
    const streamId = stream.data.id
    const drafted = await api.POST('/api/cycles/streams/{streamId}/cycles/draft', { params: { path: { streamId } }, body: { mode: 'generate', prompt: 'The Summariser summarises the request, then @local approves it.' } })
    assert.ok(drafted.data, JSON.stringify(drafted.error))
    assert.deepEqual(drafted.data.draft.phasesTemplate.map((p) => [p.phaseName, p.autoAdvance, p.operatorPool]), [['Summarise request', false, ['local']]])
    const saved = await api.POST('/api/cycles/streams/{streamId}/cycles', { params: { path: { streamId } }, body: drafted.data.draft })
    assert.ok(saved.data, JSON.stringify(saved.error))

    const posted = await api.POST('/api/chat/streams/{streamId}/messages', { params: { path: { streamId } }, body: { content: paragraph('A customer asks for a refund') } })
    assert.ok(posted.data)
    const postedEtag: PostedHeaders['ETag'] = posted.response.headers.get('etag') ?? ''
    assert.equal(postedEtag, '"1"')
    const read = await api.GET('/api/chat/messages/{id}', { params: { path: { id: posted.data.id } } })
    assert.ok(read.data)
    const etag: MessageHeaders['ETag'] = read.response.headers.get('etag') ?? ''
    const edited = await api.PATCH('/api/chat/messages/{id}', { params: { path: { id: posted.data.id }, header: { 'if-match': etag } }, body: { content: paragraph('A customer asks for a refund, twice') } })
    assert.ok(edited.data, JSON.stringify(edited.error))
    assert.deepEqual([edited.data.revision, edited.data.text], [2, 'A customer asks for a refund, twice'])
    const stale = await api.PATCH('/api/chat/messages/{id}', { params: { path: { id: posted.data.id }, header: { 'if-match': etag } }, body: { content: paragraph('lost') } })
    assert.equal(stale.response.status, 412)
    assert.equal(stale.error?.detail, 'The message is at revision 2 (ETag "2"); read it again and retry.')

    const started = await api.POST('/api/cycles/streams/{streamId}/cycles/{cycleId}/runs', { params: { path: { streamId, cycleId: saved.data.id } }, body: { input: { ticket: 1042 } } })
    assert.ok(started.data, JSON.stringify(started.error))
    const runId = started.data.id
    const waiting = await waitFor(async () => {
      const run = await api.GET('/api/runs/{runId}', { params: { path: { runId } } })
      return run.data?.status === 'waiting' ? run.data : undefined
    }, 15000, 'the run to wait at the gate')
    const phase = waiting.phases[0]
    assert.ok(phase)
    assert.equal(phase.status, 'awaiting_decision')
    const decided = await api.POST('/api/runs/{runId}/phases/{phaseRunId}/decision', { params: { path: { runId, phaseRunId: phase.id } }, body: { decision: 'approve' } })
    assert.ok(decided.data, JSON.stringify(decided.error))
    assert.equal(decided.data.status, 'succeeded')

    // An image as raw bytes: the body is a Blob, sent as it is.
    const uploaded = await api.POST('/api/assets', { body: new Blob([png(2, 2)], { type: 'image/png' }), headers: { 'content-type': 'image/png' }, bodySerializer: (body) => body })
    assert.ok(uploaded.data, JSON.stringify(uploaded.error))
    assert.equal(uploaded.response.status, 201)
    assert.equal(uploaded.data.contentType, 'image/png')

    // Events: `data` is typed by `type`, no cast.
    const events = await api.GET('/api/streams/{streamId}/events', { params: { path: { streamId } } })
    // The operation answers JSON or an event stream (text): a page is the JSON one.
    if (typeof events.data !== 'object') throw new Error(`no page of events: ${JSON.stringify(events.error)}`)
    const statuses: string[] = []
    for (const event of events.data.data) {
      if (event.type === 'run.updated') statuses.push(event.data.status)
      if (event.type === 'message.edited') assert.equal(event.data.revision, 2)
    }
    assert.ok(statuses.includes('succeeded'), statuses.join())
  })
})
