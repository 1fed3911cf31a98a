// Shared set-up of the A2A tests: a listening Tandem on loopback, API keys, and the official SDK's client for an
// exposed cycle.
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client'
import { Role, type Message } from '@a2a-js/sdk'
import { randomUUID } from 'node:crypto'
import { send } from '../helpers.js'
import { createKey } from '../auth.js'

export async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  return app.listeningOrigin
}

export async function keyFor(app: FastifyInstance, handle: string, role?: 'admin'): Promise<string> {
  const workspaceId = (await send(app, 'GET', '/api/me')).json().workspaceId
  return (await createKey(app, { workspaceId, name: handle, handle, ...(role ? { role } : {}) })).key
}

export async function expose(app: FastifyInstance, streamId: string, cycleId: string, a2a: unknown = { exposed: true }) {
  const res = await send(app, 'PATCH', `/api/cycles/streams/${streamId}/cycles/${cycleId}`, { a2a })
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

/** A fetch that sends the key (and the A2A version the SDK already sends) on every call, card included. */
export const keyedFetch = (key: string | null): typeof fetch => (input, init = {}) => {
  const headers = new Headers(init.headers)
  if (key) headers.set('authorization', `Bearer ${key}`)
  return fetch(input, { ...init, headers })
}

export async function sdkClient(base: string, cycleId: string, key: string | null): Promise<Client> {
  const fetchImpl = keyedFetch(key)
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  }))
  return factory.createFromUrl(`${base}/a2a/cycles/${cycleId}/`)
}

export function userMessage(text: string, extra: Partial<Message> = {}): Message {
  return {
    messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, metadata: undefined, extensions: [], referenceTaskIds: [],
    parts: [{ content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: undefined }],
    ...extra,
  }
}

/** A raw JSON-RPC call (for what the SDK's client would not send). */
export async function rpc(base: string, cycleId: string, method: string, params: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}/a2a/cycles/${cycleId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  })
  return { status: res.status, headers: res.headers, body: (await res.json()) as any }
}
