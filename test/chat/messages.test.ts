// Chat messages over HTTP: post, list, read, edit with revisions, If-Match, permissions and rendering.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, pointers, send } from '../helpers.js'
import { waitFor } from '../wait.js'
import { ensureWorkspace } from '../../src/workspaces/store.js'
import { createKey } from '../auth.js'

type Run = { type: 'text'; text: string; style?: Record<string, boolean> }
const paragraph = (...texts: string[]) => ({ type: 'paragraph', children: texts.map((text): Run => ({ type: 'text', text })) })
const contentOf = (...paragraphs: string[]) => ({ blocks: [{ type: 'rich_text', elements: paragraphs.map((t) => paragraph(t)) }] })
const blocks = (n: number, text = 'x') => ({ blocks: Array.from({ length: n }, () => ({ type: 'rich_text', elements: [paragraph(text)] })) })

for (const dialect of dialects()) {
  describe(`chat messages (${dialect})`, () => {
    let app: FastifyInstance
    let streamId: string
    let member: Record<string, string>
    let otherMember: Record<string, string>
    let stranger: Record<string, string>
    before(async () => {
      app = await build(dialect, { TANDEM_AUTH: 'local' })
      streamId = (await send(app, 'POST', '/api/streams', { name: 'chat' })).json().id
      const db = app.database.db
      const workspaceId = await ensureWorkspace(db, 'default')
      member = (await createKey(app, { workspaceId, name: 'm1', role: 'member' })).headers
      otherMember = (await createKey(app, { workspaceId, name: 'm2', role: 'member' })).headers
      stranger = (await createKey(app, { workspace: 'elsewhere', name: 's', role: 'admin' })).headers
    })
    after(() => app.close())

    const post = (content: unknown, headers: Record<string, string> = {}) => send(app, 'POST', `/api/chat/streams/${streamId}/messages`, { content }, headers)
    const edit = (id: string, content: unknown, headers: Record<string, string> = {}) => send(app, 'PATCH', `/api/chat/messages/${id}`, { content }, headers)
    const read = (id: string) => send(app, 'GET', `/api/chat/messages/${id}`)

    it('posts a message: 201, Location, ETag, author = caller, plain text rendering', async () => {
      const res = await post(contentOf('Hello', 'world'))
      assert.equal(res.statusCode, 201)
      const message = res.json()
      assert.equal(res.headers.location, `/api/chat/messages/${message.id}`)
      assert.equal(res.headers.etag, '"1"')
      assert.deepEqual({ ...message, id: undefined, createdAt: undefined }, {
        id: undefined,
        streamId,
        authorId: '00000000-0000-7000-8000-000000000001',
        authorType: 'principal',
        content: contentOf('Hello', 'world'),
        text: 'Hello\nworld',
        revision: 1,
        createdAt: undefined,
        editedAt: null,
        status: 'complete',
      })
      const fetched = await read(message.id.toUpperCase())
      assert.equal(fetched.headers.etag, '"1"')
      assert.deepEqual(fetched.json(), message)
      const mine = (await post(contentOf('from a member'), member)).json()
      assert.notEqual(mine.authorId, message.authorId)
    })

    it('content.blocks: at least 1 and at most 50; text at most 40000 characters in all', async () => {
      assert.equal((await post(blocks(1))).statusCode, 201)
      assert.equal((await post(blocks(50))).statusCode, 201)
      assert.deepEqual(pointers(await post(blocks(0))), ['/content/blocks'])
      assert.deepEqual(pointers(await post(blocks(51))), ['/content/blocks'])
      assert.equal((await post(blocks(2, '😀'.repeat(20000)))).statusCode, 201, '40000 astral characters')
      const over = await post(blocks(2, '😀'.repeat(20000) + 'x'))
      assert.equal(over.statusCode, 400)
      assert.deepEqual(pointers(over), ['/content'])
      assert.match(over.json().errors[0].detail, /at most 40000 characters.*\(has 40002\)/)
    })

    it('rejects every unknown type, property and wrong value with a pointer to the node', async () => {
      const base = () => ({
        blocks: [{ type: 'rich_text', elements: [paragraph('a'), { type: 'paragraph', direction: 'rtl', children: [{ type: 'text', text: 'b' }, { type: 'text', text: 'c', style: { bold: true } }] }] }],
      })
      assert.equal((await post(base())).statusCode, 201)
      const cases: Array<[(c: any) => void, string]> = [
        [(c) => (c.blocks[0].type = 'section'), '/content/blocks/0/type'],
        [(c) => (c.blocks[0].elements[1].type = 'list'), '/content/blocks/0/elements/1/type'],
        [(c) => (c.blocks[0].elements[1].children[1].type = 'link'), '/content/blocks/0/elements/1/children/1/type'],
        [(c) => (c.blocks[0].elements[1].direction = 'auto'), '/content/blocks/0/elements/1/direction'],
        [(c) => (c.blocks[0].elements[1].children[1].style.bold = 'true'), '/content/blocks/0/elements/1/children/1/style/bold'],
        [(c) => (c.blocks[0].elements[1].children[1].style.underline = true), '/content/blocks/0/elements/1/children/1/style/underline'],
        [(c) => (c.blocks[0].elements[1].children[1].text = 5), '/content/blocks/0/elements/1/children/1/text'],
        [(c) => delete c.blocks[0].elements[1].children[1].text, '/content/blocks/0/elements/1/children/1/text'],
        [(c) => delete c.blocks[0].elements[0].children, '/content/blocks/0/elements/0/children'],
        [(c) => delete c.blocks[0].elements, '/content/blocks/0/elements'],
        [(c) => delete c.blocks[0].type, '/content/blocks/0/type'],
        [(c) => (c.blocks[0].color = 'red'), '/content/blocks/0/color'],
        [(c) => (c.blocks[0].elements[0].id = 1), '/content/blocks/0/elements/0/id'],
        [(c) => (c.blocks[0].elements[0].children[0].href = 'x'), '/content/blocks/0/elements/0/children/0/href'],
        [(c) => (c.version = 2), '/content/version'],
        [(c) => delete c.blocks, '/content/blocks'],
      ]
      for (const [mutate, pointer] of cases) {
        const content = base()
        mutate(content)
        const res = await post(content)
        assert.equal(res.statusCode, 400, pointer)
        assert.deepEqual(pointers(res), [pointer])
      }
      assert.deepEqual(pointers(await send(app, 'POST', `/api/chat/streams/${streamId}/messages`, {})), ['/content'])
      assert.deepEqual(pointers(await send(app, 'POST', `/api/chat/streams/${streamId}/messages`, { content: 'hi' })), ['/content'])
      assert.deepEqual(pointers(await send(app, 'POST', `/api/chat/streams/${streamId}/messages`, { content: base(), author: 'x' })), ['/author'])
    })

    it('unknown or foreign streams and messages are 404', async () => {
      const unknown = '01890a5d-ac96-774b-bcce-b302099a8057'
      assert.equal((await send(app, 'POST', `/api/chat/streams/${unknown}/messages`, { content: contentOf('x') })).statusCode, 404)
      assert.equal((await send(app, 'GET', `/api/chat/streams/${unknown}/messages`)).statusCode, 404)
      assert.equal((await read(unknown)).statusCode, 404)
      assert.equal((await edit(unknown, contentOf('x'))).statusCode, 404)
      const message = (await post(contentOf('private'))).json()
      for (const [method, url] of [['GET', `/api/chat/messages/${message.id}`], ['GET', `/api/chat/messages/${message.id}/revisions`], ['GET', `/api/chat/messages/${message.id}/render`], ['GET', `/api/chat/streams/${streamId}/messages`]] as const) {
        assert.equal((await send(app, method, url, undefined, stranger)).statusCode, 404, url)
      }
      assert.equal((await edit(message.id, contentOf('hijack'), stranger)).statusCode, 404)
      assert.equal((await read(message.id)).json().text, 'private')
    })

    it('lists a stream\'s messages oldest first with cursor pagination', async () => {
      const stream = (await send(app, 'POST', '/api/streams', { name: 'list' })).json().id
      const ids: string[] = []
      for (let i = 0; i < 5; i++) ids.push((await send(app, 'POST', `/api/chat/streams/${stream}/messages`, { content: contentOf(`m${i}`) })).json().id)
      const first = (await send(app, 'GET', `/api/chat/streams/${stream}/messages?limit=3`)).json()
      const second = (await send(app, 'GET', `/api/chat/streams/${stream}/messages?limit=3&cursor=${first.nextCursor}`)).json()
      assert.deepEqual([...first.data, ...second.data].map((m: { id: string }) => m.id), ids)
      assert.deepEqual([...first.data, ...second.data].map((m: { text: string }) => m.text), ['m0', 'm1', 'm2', 'm3', 'm4'])
      assert.equal(second.nextCursor, null)
    })

    it('an edit replaces the content, bumps revision, sets editedAt and keeps the old content as a revision', async () => {
      const message = (await post(contentOf('first'))).json()
      // A later editedAt needs the clock to have moved past the post's millisecond.
      await waitFor(() => Date.now() > Date.parse(message.createdAt), { timeoutMs: 1000, what: 'the clock to pass the post' })
      const res = await edit(message.id, contentOf('second'))
      assert.equal(res.statusCode, 200)
      assert.equal(res.headers.etag, '"2"')
      const edited = res.json()
      assert.deepEqual({ ...edited, editedAt: undefined }, { ...message, content: contentOf('second'), text: 'second', revision: 2, editedAt: undefined })
      assert.ok(edited.editedAt > message.createdAt)
      assert.deepEqual(await read(message.id).then((r) => r.json()), edited)
      const revisions = (await send(app, 'GET', `/api/chat/messages/${message.id}/revisions`)).json()
      assert.deepEqual(revisions, { data: [{ revision: 1, content: contentOf('first'), text: 'first', createdAt: message.createdAt }], nextCursor: null })
    })

    it("an edit's message.edited event holds the message as answered, its content's JSON as sent", async () => {
      const message = (await post(contentOf('first'))).json()
      // Keys in another order than the schema's, escapes, a surrogate pair: the event keeps the text as sent.
      const sent = { blocks: [{ elements: [{ children: [{ text: 'ünï "quoted" \\ 😀\n', style: { italic: true, bold: false }, type: 'text' }], direction: 'rtl', type: 'paragraph' }], type: 'rich_text' }] }
      const res = await edit(message.id, sent)
      assert.equal(res.statusCode, 200)
      const edited = res.json()
      const event = await app.database.db
        .selectFrom('stream_events')
        .select(['type', 'data'])
        .where('stream_id', '=', streamId)
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirstOrThrow()
      assert.equal(event.type, 'message.edited')
      assert.deepEqual(JSON.parse(event.data), edited)
      assert.equal(event.data, JSON.stringify({ ...edited, content: sent }))
    })

    it('revisions hold every earlier content in order after any sequence of edits, page by page', async () => {
      const message = (await post(contentOf('v1'))).json()
      const versions = ['v1']
      for (let i = 2; i <= 12; i++) {
        const text = `v${i} ${'·'.repeat(i % 4)}`
        assert.equal((await edit(message.id, contentOf(text))).statusCode, 200)
        versions.push(text)
      }
      const seen: Array<{ revision: number; text: string }> = []
      let cursor: string | null = null
      do {
        const page: { data: Array<{ revision: number; text: string }>; nextCursor: string | null } = (
          await send(app, 'GET', `/api/chat/messages/${message.id}/revisions?limit=5${cursor ? `&cursor=${cursor}` : ''}`)
        ).json()
        seen.push(...page.data)
        cursor = page.nextCursor
      } while (cursor)
      assert.deepEqual(seen.map((r) => r.revision), Array.from({ length: 11 }, (_, i) => i + 1))
      assert.deepEqual(seen.map((r) => r.text), versions.slice(0, 11))
      assert.equal((await read(message.id)).json().text, versions[11])
      assert.deepEqual(pointers(await send(app, 'GET', `/api/chat/messages/${message.id}/revisions?cursor=${Buffer.from('0').toString('base64url')}`)), ['/query/cursor'])
    })

    it('a rejected edit (any 4xx) leaves the message byte for byte unchanged', async () => {
      const created = await post(contentOf('keep me'), member)
      const id = created.json().id
      const before = (await read(id)).body
      const rejected = [
        await edit(id, { blocks: [] }),
        await edit(id, blocks(51)),
        await edit(id, blocks(2, 'x'.repeat(20001))),
        await edit(id, { blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: [{ type: 'text', text: 'x', style: { bold: 1 } }] }] }] }),
        await edit(id, contentOf('stale'), { 'if-match': '"7"' }),
        await edit(id, contentOf('not yours'), otherMember),
        await app.inject({ method: 'PATCH', url: `/api/chat/messages/${id}`, payload: '{"content":', headers: { 'content-type': 'application/json' } }),
        await app.inject({ method: 'PATCH', url: `/api/chat/messages/${id}`, payload: 'content', headers: { 'content-type': 'text/plain' } }),
      ]
      assert.deepEqual(rejected.map((r) => r.statusCode), [400, 400, 400, 400, 412, 403, 400, 415])
      assert.equal((await read(id)).body, before)
      assert.deepEqual((await send(app, 'GET', `/api/chat/messages/${id}/revisions`)).json().data, [])
    })

    it('If-Match: the current ETag or * edits; a stale or weak one is 412', async () => {
      const id = (await post(contentOf('etag'))).json().id
      assert.equal((await edit(id, contentOf('a'), { 'if-match': '"1"' })).statusCode, 200)
      const stale = await edit(id, contentOf('b'), { 'if-match': '"1"' })
      assert.equal(stale.statusCode, 412)
      assert.equal(stale.json().type, 'urn:tandem:problem:precondition-failed')
      assert.equal((await edit(id, contentOf('b'), { 'if-match': 'W/"2"' })).statusCode, 412)
      assert.equal((await edit(id, contentOf('b'), { 'if-match': 'garbage' })).statusCode, 400, 'a malformed If-Match is a 400')
      assert.equal((await edit(id, contentOf('b'), { 'if-match': '"9", "2"' })).statusCode, 200)
      assert.equal((await edit(id, contentOf('c'), { 'if-match': '*' })).statusCode, 200)
      assert.equal((await read(id)).json().revision, 4)
    })

    it('only the author or a workspace admin may edit (403 otherwise)', async () => {
      const id = (await post(contentOf('by member'), member)).json().id
      assert.equal((await edit(id, contentOf('other member'), otherMember)).statusCode, 403)
      assert.equal((await edit(id, contentOf('author'), member)).statusCode, 200)
      assert.equal((await edit(id, contentOf('local admin'))).statusCode, 200)
      const adminKey = (await createKey(app, { name: 'adm', role: 'admin' })).headers
      assert.equal((await edit(id, contentOf('admin key'), adminKey)).statusCode, 200)
      const res = await read(id)
      assert.equal(res.json().revision, 4)
      assert.equal(res.json().authorId, (await post(contentOf('x'), member)).json().authorId, 'the author stays the author')
    })

    it('renders HTML, Markdown and text with their media types; HTML is escaped', async () => {
      const content = {
        blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', direction: 'rtl', children: [{ type: 'text', text: '<img src=x onerror=alert(1)>' }, { type: 'text', text: 'b', style: { bold: true } }] }] }],
      }
      const id = (await post(content)).json().id
      const html = await send(app, 'GET', `/api/chat/messages/${id}/render?format=html`)
      assert.equal(html.headers['content-type'], 'text/html; charset=utf-8')
      assert.equal(html.body, '<div class="rich-text"><p dir="rtl">&lt;img src=x onerror=alert(1)&gt;<strong>b</strong></p></div>')
      assert.equal((await send(app, 'GET', `/api/chat/messages/${id}/render`)).body, html.body, 'html by default')
      const markdown = await send(app, 'GET', `/api/chat/messages/${id}/render?format=markdown`)
      assert.equal(markdown.headers['content-type'], 'text/markdown; charset=utf-8')
      assert.equal(markdown.body, '\\<img src\\=x onerror\\=alert\\(1\\)\\>**b**')
      const text = await send(app, 'GET', `/api/chat/messages/${id}/render?format=text`)
      assert.equal(text.headers['content-type'], 'text/plain; charset=utf-8')
      assert.equal(text.body, '<img src=x onerror=alert(1)>b')
      assert.deepEqual(pointers(await send(app, 'GET', `/api/chat/messages/${id}/render?format=pdf`)), ['/query/format'])
    })
  })

  describe(`concurrent edits (${dialect})`, () => {
    let app: FastifyInstance
    let base: string
    before(async () => {
      app = await build(dialect)
      base = await app.listen({ port: 0, host: '127.0.0.1' })
    })
    after(() => app.close())

    const json = async (response: Promise<Response>): Promise<any> => (await response).json()
    const http = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      fetch(base + path, { method, headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...headers }, body: body ? JSON.stringify(body) : undefined })

    it('edits carrying the same ETag, sent at once over real connections: exactly one 200, the rest 412', async () => {
      const stream = await json(http('POST', '/api/streams', { name: 'race' }))
      const message = await json(http('POST', `/api/chat/streams/${stream.id}/messages`, { content: contentOf('start') }))
      for (let round = 1; round <= 10; round++) {
        const etag = (await http('GET', `/api/chat/messages/${message.id}`)).headers.get('etag') as string
        const statuses = await Promise.all(
          Array.from({ length: 4 }, (_, i) => http('PATCH', `/api/chat/messages/${message.id}`, { content: contentOf(`round ${round} writer ${i}`) }, { 'if-match': etag }).then((r) => r.status)),
        )
        assert.deepEqual(statuses.sort(), [200, 412, 412, 412], `round ${round}`)
      }
      const final = await json(http('GET', `/api/chat/messages/${message.id}`))
      assert.equal(final.revision, 11)
      const revisions = await json(http('GET', `/api/chat/messages/${message.id}/revisions?limit=100`))
      assert.deepEqual(revisions.data.map((r: { revision: number }) => r.revision), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    })

    it('edits without If-Match, sent at once: all succeed, none is lost from the history', async () => {
      const stream = await json(http('POST', '/api/streams', { name: 'pile-up' }))
      const message = await json(http('POST', `/api/chat/streams/${stream.id}/messages`, { content: contentOf('start') }))
      const texts = Array.from({ length: 8 }, (_, i) => `writer ${i}`)
      const statuses = await Promise.all(texts.map((text) => http('PATCH', `/api/chat/messages/${message.id}`, { content: contentOf(text) }).then((r) => r.status)))
      assert.deepEqual(statuses, Array(8).fill(200))
      const final = await json(http('GET', `/api/chat/messages/${message.id}`))
      assert.equal(final.revision, 9)
      const revisions = await json(http('GET', `/api/chat/messages/${message.id}/revisions?limit=100`))
      const history = [...revisions.data.map((r: { text: string }) => r.text), final.text]
      assert.equal(history[0], 'start')
      assert.deepEqual(history.slice(1).sort(), [...texts].sort(), 'every edit appears exactly once')
    })
  })
}
