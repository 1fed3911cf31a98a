// /api/assets: images (avatars) uploaded as raw bytes, sniffed (sniff.ts), kept in the database and served with
// headers that keep them inert: their stored type, nosniff, a CSP that allows nothing and sandboxes, an ETag
// and a long private cache (an asset's bytes never change). Any principal uploads and reads; admins delete.
import { createHash } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { IdParams, ProblemResponses } from '../http/schemas.js'
import { AppError, notFound } from '../http/problem.js'
import { Asset, ImageBody, ImageContent } from './schemas.js'
import { isImageType, mediaType, refuseMediaType, sniffImage } from './sniff.js'
import { deleteAsset, findAsset, findAssetContent, insertAsset } from './store.js'

export const CONTENT_SECURITY_POLICY = "default-src 'none'; sandbox"
export const CACHE_CONTROL = 'private, max-age=31536000, immutable'

function tooLarge(maxBytes: number): AppError {
  return new AppError('payload-too-large', `The image must be at most ${maxBytes} bytes (TANDEM_ASSET_MAX_BYTES).`)
}

/** The body's bytes, refused as soon as they pass `maxBytes` (by Content-Length, or while they arrive). */
function readBody(payload: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(payload.headers['content-length'])
    if (Number.isFinite(declared) && declared > maxBytes) return reject(tooLarge(maxBytes))
    const chunks: Buffer[] = []
    let size = 0
    payload.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBytes) {
        payload.removeAllListeners('data')
        payload.resume()
        return reject(tooLarge(maxBytes))
      }
      chunks.push(chunk)
    })
    payload.on('end', () => resolve(Buffer.concat(chunks)))
    payload.on('error', reject)
  })
}

export const assetRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.database
  const maxBytes = app.config.assetMaxBytes
  // Every media type but JSON reaches the handler as bytes, which checks it: only this plugin's routes see this.
  // The idempotency plugin fingerprints JSON.stringify(body): the bytes stand in as their SHA-256 there
  // (stringifying a Buffer writes every byte as a number: ~90 ms for 1 MiB on the event loop).
  app.addContentTypeParser('*', (_request, payload, done) => {
    readBody(payload, maxBytes).then((bytes) => {
      const sha256 = createHash('sha256').update(bytes).digest('hex')
      Object.defineProperty(bytes, 'toJSON', { value: () => ({ sha256 }) })
      done(null, bytes)
    }, (error: Error) => done(error, undefined))
  })

  app.post(
    '/assets',
    {
      config: { idempotent: true },
      schema: {
        tags: ['assets'],
        operationId: 'uploadAsset', summary: 'Upload an image (PNG, JPEG, WebP or GIF) as the raw body',
        description: `At most TANDEM_ASSET_MAX_BYTES (default 1 MiB; 413) and 4096 × 4096 pixels (422). The bytes' signature must be the Content-Type's (else 415; SVG is refused).`,
        body: ImageBody,
        response: { 201: Asset, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const type = mediaType(request.headers['content-type'])
      if (!isImageType(type) || !Buffer.isBuffer(request.body)) throw refuseMediaType(type)
      if (request.body.length === 0) throw new AppError('unsupported-media-type', 'The body is empty; send the image bytes.')
      const { width, height } = sniffImage(request.body, type)
      const content = request.body
      const asset = await reply.withTransaction(async (trx) => {
        const asset = await insertAsset(trx, request.principal.workspaceId, { contentType: type, content, width, height })
        reply.code(201).header('location', `/api/assets/${asset.id}`)
        return asset
      })
      return reply.send(asset)
    },
  )

  app.get(
    '/assets/:id',
    { schema: { tags: ['assets'], operationId: 'getAsset', summary: 'Read an asset (its type, size and dimensions)', params: IdParams, response: { 200: Asset, ...ProblemResponses } } },
    async (request) => {
      const asset = await findAsset(db, request.principal.workspaceId, request.params.id)
      if (!asset) throw notFound('Asset')
      return asset
    },
  )

  app.get(
    '/assets/:id/content',
    {
      schema: {
        tags: ['assets'],
        operationId: 'getAssetContent', summary: 'Read an asset\'s bytes',
        description: 'Sent with the stored Content-Type, `X-Content-Type-Options: nosniff`, `Content-Security-Policy: default-src \'none\'; sandbox`, an ETag (304 on `If-None-Match`) and `Cache-Control: private, max-age=31536000, immutable`.',
        params: IdParams,
        response: { 200: ImageContent, 304: Type.Null({ description: 'Not modified; no body' }), ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const asset = await findAssetContent(db, request.principal.workspaceId, request.params.id)
      if (!asset) throw notFound('Asset')
      const etag = `"${asset.sha256}"`
      reply.headers({ etag, 'cache-control': CACHE_CONTROL, 'content-security-policy': CONTENT_SECURITY_POLICY, 'x-content-type-options': 'nosniff' })
      const match = request.headers['if-none-match']
      if (match && match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag || tag.trim() === '*')) return reply.code(304).send(null)
      return reply.type(asset.contentType).header('content-disposition', 'inline').send(asset.content)
    },
  )

  app.delete(
    '/assets/:id',
    {
      config: { adminOnly: 'delete assets' },
      schema: { tags: ['assets'], operationId: 'deleteAsset', summary: 'Delete an asset (admins)', params: IdParams, response: { 204: Type.Null({ description: 'Deleted; no body' }), ...ProblemResponses } },
    },
    async (request, reply) => {
      if (!(await deleteAsset(db, request.principal.workspaceId, request.params.id))) throw notFound('Asset')
      return reply.code(204).send(null)
    },
  )
}
