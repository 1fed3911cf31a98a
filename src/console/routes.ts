// The operators' console: the Vite build in web/dist served by Tandem itself. Hashed assets are cached for a
// year; index.html is revalidated on every load and answers the SPA's routes. Nothing comes from another
// origin, and the Content-Security-Policy allows no inline script and no third-party origin.
import { existsSync, readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance, FastifyReply } from 'fastify'
import fastifyStatic from '@fastify/static'

// src/console/ and dist/console/ are both two levels below the repository root.
export const CONSOLE_DIR = fileURLToPath(new URL('../../web/dist/', import.meta.url))

export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  // Avatars are fetched with the caller's key and shown from blob: URLs (an <img> cannot send the key).
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'self'",
].join('; ')

/** The console's own routes; everything else (/api, /docs, /openapi.json, /healthz, /metrics) answers for itself. */
export const SPA_ROUTES = ['/', '/streams/:id', '/streams/:id/runs/:runId', '/agents', '/credentials', '/inbox', '/mcp-servers', '/insights', '/insights/agents/:id']

export interface ConsoleOptions {
  /** The built console (defaults to web/dist); tests point elsewhere. */
  root?: string
}

export async function consoleRoutes(app: FastifyInstance, options: ConsoleOptions): Promise<void> {
  const root = options.root ?? CONSOLE_DIR
  if (!existsSync(`${root}/index.html`)) {
    app.log.warn(`the console is not built (${root}index.html is missing): run npm run build:web`)
    return
  }
  app.addHook('onSend', async (_request, reply, payload) => {
    reply.header('content-security-policy', CONSOLE_CSP)
    return payload
  })
  // Vite names every file under assets/ by its content hash, so a changed file is a new URL. One route per
  // file (no wildcard): an unknown asset is the API's ordinary 404 problem.
  await app.register(fastifyStatic, { root: `${root}/assets`, prefix: '/assets/', maxAge: '365d', immutable: true, index: false, wildcard: false })

  const revalidated = (reply: FastifyReply, file: string) => reply.header('cache-control', 'no-cache').sendFile(file, root, { cacheControl: false })
  const sendIndex = (reply: FastifyReply) => revalidated(reply, 'index.html')
  for (const url of SPA_ROUTES) app.get(url, { schema: { hide: true } }, (_request, reply) => sendIndex(reply))
  // Files Vite copies from web/public (the icon): not hashed, so revalidated.
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    if (entry.isFile() && entry.name !== 'index.html') {
      app.get(`/${entry.name}`, { schema: { hide: true } }, (_request, reply) => revalidated(reply, entry.name))
    }
  }
}
