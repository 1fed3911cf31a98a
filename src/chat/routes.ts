// /api/chat: post, list, read, edit (with If-Match), revisions and renderings of rich-text messages.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { Page, PageQuery, Problem, ProblemResponses } from '../http/schemas.js'
import { decodeCursor, toPage } from '../http/pagination.js'
import { AppError, notFound, type FieldError } from '../http/problem.js'
import { traceparentFor } from '../http/trace.js'
import { StreamIdParams } from '../streams/schemas.js'
import { requireStream } from '../streams/store.js'
import { Content, MAX_PARAGRAPHS, MAX_RUNS, MAX_TEXT_LENGTH, Message, MessageBody, MessageIdParams, RenderQuery, Revision } from './schemas.js'
import { renderHtml, renderMarkdown, renderText, textLength } from './richtext.js'
import { editMessage, findMessage, insertMessage, listMessages, listRevisions } from './store.js'

const etagOf = (message: Message) => `"${message.revision}"`

/** If-Match as RFC 9110 writes it: `*`, or entity tags — always quoted, weak ones prefixed `W/` — separated by commas. */
const IfMatchHeaders = Type.Object({
  'if-match': Type.Optional(
    Type.String({
      pattern: '^[ \\t]*(?:\\*|(?:W/)?"[^"]*"(?:[ \\t]*,[ \\t]*(?:W/)?"[^"]*")*)[ \\t]*$',
      description: '* or a comma-separated list of quoted ETags such as "2" (the ETag must be quoted, as the ETag header gives it)',
    }),
  ),
})

/**
 * If-Match (RFC 9110 §13.1.1, strong comparison): undefined when absent or `*` (any revision), else the
 * revisions its strong tags name — empty when it names none that could match (weak tags, garbage).
 */
function acceptedRevisions(header: string | undefined): number[] | undefined {
  if (header === undefined) return undefined
  const tags = header.split(',').map((tag) => tag.trim())
  if (tags.includes('*')) return undefined
  return tags.flatMap((tag) => {
    const strong = /^"([1-9]\d{0,14})"$/.exec(tag)
    return strong ? [Number(strong[1])] : []
  })
}

/** The bounds on the whole content, which the schema cannot state: text, paragraphs and runs in all blocks. */
function checkContentSize(content: Content): void {
  const errors: FieldError[] = []
  const length = textLength(content)
  if (length > MAX_TEXT_LENGTH) errors.push({ pointer: '/content', detail: `must hold at most ${MAX_TEXT_LENGTH} characters of text in all blocks together (has ${length})` })
  let paragraphs = 0
  let runs = 0
  for (const block of content.blocks) {
    paragraphs += block.elements.length
    for (const paragraph of block.elements) runs += paragraph.children.length
  }
  if (paragraphs > MAX_PARAGRAPHS) errors.push({ pointer: '/content', detail: `must hold at most ${MAX_PARAGRAPHS} paragraphs in all blocks together (has ${paragraphs})` })
  if (runs > MAX_RUNS) errors.push({ pointer: '/content', detail: `must hold at most ${MAX_RUNS} text runs in all blocks together (has ${runs})` })
  if (errors.length > 0) throw new AppError('validation-error', `The body has ${errors.length} problem${errors.length === 1 ? '' : 's'}; see errors.`, errors)
}

const RENDERINGS = {
  html: { type: 'text/html; charset=utf-8', render: renderHtml },
  markdown: { type: 'text/markdown; charset=utf-8', render: renderMarkdown },
  text: { type: 'text/plain; charset=utf-8', render: renderText },
}

const Rendering = Type.String({ description: 'the rendering itself' })

export const chatRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.database

  app.post(
    '/chat/streams/:streamId/messages',
    {
      config: { idempotent: true },
      schema: {
        tags: ['chat'],
        operationId: 'postMessage', summary: 'Post a message to a stream',
        params: StreamIdParams,
        body: MessageBody,
        response: { 201: Message, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const { workspaceId, principalId } = request.principal
      checkContentSize(request.body.content)
      const message = await reply.withTransaction(async (trx) => {
        const stream = await requireStream(trx, workspaceId, request.params.streamId)
        const message = await insertMessage(trx, { workspaceId, streamId: stream.id, authorId: principalId, content: request.body.content, traceparent: traceparentFor(request) })
        reply.code(201).header('location', `/api/chat/messages/${message.id}`).header('etag', etagOf(message))
        return message
      })
      return reply.send(message)
    },
  )

  app.get(
    '/chat/streams/:streamId/messages',
    {
      schema: {
        tags: ['chat'],
        operationId: 'listMessages', summary: 'List the messages of a stream, oldest first',
        params: StreamIdParams,
        querystring: PageQuery,
        response: { 200: Page(Message), ...ProblemResponses },
      },
    },
    async (request) => {
      const { workspaceId } = request.principal
      const stream = await requireStream(db, workspaceId, request.params.streamId)
      const limit = request.query.limit ?? 50
      const rows = await listMessages(db, workspaceId, stream.id, limit + 1, decodeCursor(request.query.cursor))
      return toPage(rows, limit)
    },
  )

  app.get(
    '/chat/messages/:id',
    { schema: { tags: ['chat'], operationId: 'getMessage', summary: 'Read a message (with ETag)', params: MessageIdParams, response: { 200: Message, ...ProblemResponses } } },
    async (request, reply) => {
      const message = await findMessage(db, request.principal.workspaceId, request.params.id)
      if (!message) throw notFound('Message')
      return reply.header('etag', etagOf(message)).send(message)
    },
  )

  app.patch(
    '/chat/messages/:id',
    {
      schema: {
        tags: ['chat'],
        operationId: 'editMessage', summary: 'Edit a message',
        description:
          'Replaces the content, increments `revision`, sets `editedAt` and keeps the previous content as a revision. ' +
          'Send `If-Match: <ETag>` to edit only if nobody else has (412 otherwise). Only the author or a workspace admin may edit (403). ' +
          'A message an agent is still streaming (`status: "streaming"`) cannot be edited (409 `message-streaming`).',
        params: MessageIdParams,
        headers: IfMatchHeaders,
        body: MessageBody,
        response: { 200: Message, 412: Problem, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const { workspaceId, principalId, role } = request.principal
      checkContentSize(request.body.content)
      // The edit and its message.edited event commit together.
      const outcome = await reply.withTransaction((trx) =>
        editMessage(trx, {
          id: request.params.id,
          workspaceId,
          principalId,
          isAdmin: role === 'admin',
          revisions: acceptedRevisions(request.headers['if-match']),
          content: request.body.content,
          traceparent: traceparentFor(request),
        }),
      )
      if ('message' in outcome) return reply.header('etag', etagOf(outcome.message)).send(outcome.message)
      if (outcome.refused === 'not-found') throw notFound('Message')
      if (outcome.refused === 'forbidden') throw new AppError('forbidden', 'Only the author of a message or a workspace admin may edit it.')
      if (outcome.refused === 'streaming') throw new AppError('message-streaming', 'The message is still being written by its agent (status "streaming"); edit it once it is complete.')
      const at = outcome.current as Message
      throw new AppError('precondition-failed', `The message is at revision ${at.revision} (ETag ${etagOf(at)}); read it again and retry.`)
    },
  )

  app.get(
    '/chat/messages/:id/revisions',
    {
      schema: {
        tags: ['chat'],
        operationId: 'listMessageRevisions', summary: "A message's earlier contents, oldest first",
        params: MessageIdParams,
        querystring: PageQuery,
        response: { 200: Page(Revision), ...ProblemResponses },
      },
    },
    async (request) => {
      const message = await findMessage(db, request.principal.workspaceId, request.params.id)
      if (!message) throw notFound('Message')
      const limit = request.query.limit ?? 50
      const after = decodeCursor(request.query.cursor, (key) => /^[1-9]\d{0,9}$/.test(key))
      const rows = await listRevisions(db, message.id, limit + 1, after === undefined ? 0 : Number(after))
      return toPage(rows, limit, (row) => String(row.revision))
    },
  )

  app.get(
    '/chat/messages/:id/render',
    {
      schema: {
        tags: ['chat'],
        operationId: 'renderMessage', summary: 'Render a message as HTML, Markdown or plain text',
        params: MessageIdParams,
        querystring: RenderQuery,
        response: {
          200: {
            description: 'The rendering, UTF-8',
            content: { 'text/html': { schema: Rendering }, 'text/markdown': { schema: Rendering }, 'text/plain': { schema: Rendering } },
          },
          ...ProblemResponses,
        },
      },
    },
    async (request, reply) => {
      const message = await findMessage(db, request.principal.workspaceId, request.params.id)
      if (!message) throw notFound('Message')
      const rendering = RENDERINGS[request.query.format ?? 'html']
      return reply
        .type(rendering.type)
        .header('etag', etagOf(message))
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'")
        .send(rendering.render(message.content))
    },
  )
}
