// The floor: the cheapest program that does the service's work on the benchmarked routes — node:http,
// JSON.parse, prepared better-sqlite3 statements, JSON.stringify. No framework, no validation, no auth. Same
// paths as the service, and the same writes: a created agent is also written to the agents' full-text index
// (FTS5, as migration 0035 makes it) in one transaction; an edit keeps the revision and appends the stream's
// event (head row bumped, event row, the workspace's webhooks read) in one transaction.
// Usage: PORT=… DATABASE_FILE=… DRAFT_REPLY=<file with the JSON to answer drafts with> node bench/floor.mjs
// FLOOR_HEADERS=1 adds the service's security headers and request id to every answer; FLOOR_FRAMEWORK=fastify
// serves the same work through bare Fastify: the two ceilings npm run bench measures with BENCH_CEILINGS=1.
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import Database from 'better-sqlite3'

const db = new Database(process.env.DATABASE_FILE)
db.pragma('journal_mode = WAL')
db.pragma('synchronous = NORMAL')
db.exec(`
  create table if not exists agents (id text primary key, provider_type text, auth_mode text, name text, avatar_asset_id text,
    credential_id text, config text, instructions text, template_id text, streaming integer, tools text, endpoint_url text,
    created_at text, updated_at text);
  create table if not exists messages (id text primary key, stream_id text, author_id text, content text, text text,
    revision integer, created_at text, edited_at text);
  create table if not exists message_revisions (message_id text, revision integer, content text, text text, created_at text,
    primary key (message_id, revision));
  create virtual table if not exists agent_search using fts5(agent_id unindexed, workspace_id unindexed, name, tools, instructions,
    tokenize = 'porter unicode61');
  create table if not exists agent_search_keys (agent_id text primary key, search_rowid integer not null);
  create table if not exists stream_event_heads (stream_id text primary key, last_id integer not null);
  create table if not exists stream_events (stream_id text, id integer, type text, data text, created_at text, primary key (stream_id, id));
  create table if not exists webhooks (id text primary key, workspace_id text, events text, stream_id text, enabled integer);
`)
const draftReply = process.env.DRAFT_REPLY ? readFileSync(process.env.DRAFT_REPLY, 'utf8') : '{}'

const insertAgent = db.prepare('insert into agents values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
const selectAgent = db.prepare('select * from agents where id = ?')
const listAgents = db.prepare('select * from agents order by id limit ?')
const insertMessage = db.prepare('insert into messages values (?, ?, ?, ?, ?, 1, ?, null)')
const selectMessage = db.prepare('select * from messages where id = ?')
const updateMessage = db.prepare('update messages set content = ?, text = ?, revision = revision + 1, edited_at = ? where id = ? returning *')
const insertRevision = db.prepare('insert into message_revisions values (?, ?, ?, ?, ?)')
const indexAgent = db.prepare('insert into agent_search (agent_id, workspace_id, name, tools, instructions) values (?, ?, ?, ?, ?)')
const insertSearchKey = db.prepare('insert into agent_search_keys (agent_id, search_rowid) values (?, last_insert_rowid())')
const bumpHead = db.prepare('insert into stream_event_heads values (?, 1) on conflict (stream_id) do update set last_id = last_id + 1 returning last_id')
const insertEvent = db.prepare('insert into stream_events values (?, ?, ?, ?, ?)')
const selectWebhooks = db.prepare('select id, events, stream_id from webhooks where workspace_id = ? and enabled = 1')

const toAgent = (r) => ({
  id: r.id, providerType: r.provider_type, authMode: r.auth_mode, name: r.name, avatarAssetId: r.avatar_asset_id,
  credentialId: r.credential_id, config: JSON.parse(r.config), instructions: r.instructions, templateId: r.template_id,
  capabilities: { streaming: r.streaming === 1, tools: JSON.parse(r.tools) }, endpointUrl: r.endpoint_url,
  createdAt: r.created_at, updatedAt: r.updated_at,
})
const toMessage = (r) => ({
  id: r.id, streamId: r.stream_id, authorId: r.author_id, content: JSON.parse(r.content), text: r.text,
  revision: r.revision, createdAt: r.created_at, editedAt: r.edited_at,
})
const plainText = (content) => content.blocks.map((b) => b.elements.map((p) => p.children.map((c) => c.text).join('')).join('\n')).join('\n\n')

const edit = db.transaction((id, content) => {
  const current = selectMessage.get(id)
  const row = updateMessage.get(JSON.stringify(content), plainText(content), new Date().toISOString(), id)
  insertRevision.run(id, current.revision, current.content, current.text, current.edited_at ?? current.created_at)
  const message = toMessage(row)
  const { last_id: eventId } = bumpHead.get(row.stream_id)
  insertEvent.run(row.stream_id, eventId, 'message.edited', JSON.stringify(message), row.edited_at)
  selectWebhooks.all('workspace')
  return message
})

const create = db.transaction((row) => {
  insertAgent.run(...Object.values(row))
  indexAgent.run(row.id, 'workspace', row.name, row.tools.replace(/[_[\]",]/g, ' '), row.instructions ?? '')
  insertSearchKey.run(row.id)
})

// With FLOOR_HEADERS=1 every answer also carries the service's security headers and a request id, as the service's do.
const HEADERS = process.env.FLOOR_HEADERS === '1'
const { SECURITY_HEADERS } = HEADERS ? await import('../dist/http/security-headers.js') : { SECURITY_HEADERS: {} }
const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' }
const headersOf = () => (HEADERS ? { ...SECURITY_HEADERS, 'x-request-id': randomUUID(), ...JSON_TYPE } : JSON_TYPE)

/** The work of one request: [status, the answer's JSON text]. */
function handle(method, path, query, body) {
  const parts = path.split('/')
  if (method === 'POST' && path === '/api/agents') {
    const now = new Date().toISOString()
    const row = {
      id: randomUUID(), provider_type: body.providerType ?? 'custom_webhook', auth_mode: body.authMode ?? null, name: body.name,
      avatar_asset_id: body.avatarAssetId ?? null, credential_id: body.credentialId ?? null, config: JSON.stringify(body.config ?? {}),
      instructions: body.instructions ?? null, template_id: body.templateId ?? null, streaming: body.capabilities?.streaming ? 1 : 0,
      tools: JSON.stringify(body.capabilities?.tools ?? []), endpoint_url: body.endpointUrl ?? null, created_at: now, updated_at: now,
    }
    create(row)
    return [201, JSON.stringify(toAgent(row))]
  }
  if (method === 'GET' && path === '/api/agents') {
    const limit = Number(new URLSearchParams(query).get('limit') ?? 50)
    const rows = listAgents.all(limit + 1)
    return [200, JSON.stringify({ data: rows.slice(0, limit).map(toAgent), nextCursor: rows.length > limit ? rows[limit - 1].id : null })]
  }
  if (method === 'GET' && parts[2] === 'agents' && parts[3]) {
    const row = selectAgent.get(parts[3])
    return row ? [200, JSON.stringify(toAgent(row))] : [404, '{}']
  }
  if (method === 'POST' && path === '/api/streams') return [201, JSON.stringify({ id: randomUUID(), name: body.name })]
  if (method === 'POST' && parts[2] === 'chat' && parts[5] === 'messages') {
    const id = randomUUID()
    insertMessage.run(id, parts[4], 'author', JSON.stringify(body.content), plainText(body.content), new Date().toISOString())
    return [201, JSON.stringify(toMessage(selectMessage.get(id)))]
  }
  if (method === 'PATCH' && parts[2] === 'chat' && parts[3] === 'messages') return [200, JSON.stringify(edit(parts[4], body.content))]
  // The floor of drafting: parse the request and answer a draft of the same size, without drafting.
  if (method === 'POST' && path.endsWith('/cycles/draft')) return [200, draftReply]
  return [404, '{}']
}

if (process.env.FLOOR_FRAMEWORK === 'fastify') {
  // The same work behind bare Fastify (its routing, JSON body parser and reply; no plugin, hook or schema): what the
  // framework itself costs (npm run bench with BENCH_CEILINGS=1).
  const { default: Fastify } = await import('fastify')
  const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 })
  const route = (request, reply) => {
    const [path, query = ''] = request.url.split('?')
    const [status, text] = handle(request.method, path, query, request.body)
    reply.code(status).headers(headersOf()).send(text)
  }
  for (const [method, url] of [['POST', '/api/agents'], ['GET', '/api/agents'], ['GET', '/api/agents/:id'], ['POST', '/api/streams'],
    ['POST', '/api/chat/streams/:id/messages'], ['PATCH', '/api/chat/messages/:id'], ['POST', '/api/cycles/streams/:id/cycles/draft']]) app.route({ method, url, handler: route })
  await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' })
  console.log(`floor (Fastify) listening on ${process.env.PORT}`)
} else {
  const server = createServer((req, res) => {
    const chunks = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      const [path, query = ''] = req.url.split('?')
      const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined
      const [status, text] = handle(req.method, path, query, body)
      res.writeHead(status, headersOf())
      res.end(text)
    })
  })
  server.listen(Number(process.env.PORT), '127.0.0.1', () => console.log(`floor listening on ${process.env.PORT}`))
}
