// /api/credentials: the secrets agents need. Admins create, change and delete them; members read names and
// hints. The secret never leaves the server: no response, log line or problem carries it.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { IdParams, Page, PageQuery, ProblemResponses } from '../http/schemas.js'
import { decodeCursor, toPage } from '../http/pagination.js'
import { notFound } from '../http/problem.js'
import type { Vault } from './vault.js'
import { CreateCredentialBody, Credential, UpdateCredentialBody } from './schemas.js'
import { deleteCredential, findCredential, insertCredential, listCredentials, updateCredential } from './store.js'

const ADMIN_ONLY = 'create, change or delete credentials'

export function credentialRoutes(vault: Vault): FastifyPluginAsyncTypebox {
  return async (app) => {
    const { db } = app.database

    app.post(
      '/credentials',
      {
        config: { idempotent: true, adminOnly: ADMIN_ONLY },
        schema: { tags: ['credentials'], operationId: 'createCredential', summary: 'Create a credential (admins)', body: CreateCredentialBody, response: { 201: Credential, ...ProblemResponses } },
      },
      async (request, reply) => {
        reply.code(201)
        const credential = await reply.withTransaction(async (trx) => {
          const created = await insertCredential(trx, vault, request.principal.workspaceId, request.body)
          reply.header('location', `/api/credentials/${created.id}`)
          return created
        })
        return reply.send(credential)
      },
    )

    app.get(
      '/credentials',
      { schema: { tags: ['credentials'], operationId: 'listCredentials', summary: 'List credentials, oldest first', querystring: PageQuery, response: { 200: Page(Credential), ...ProblemResponses } } },
      async (request) => {
        const limit = request.query.limit ?? 50
        return toPage(await listCredentials(db, request.principal.workspaceId, limit + 1, decodeCursor(request.query.cursor)), limit)
      },
    )

    app.get(
      '/credentials/:id',
      { schema: { tags: ['credentials'], operationId: 'getCredential', summary: 'Read a credential (name and hint)', params: IdParams, response: { 200: Credential, ...ProblemResponses } } },
      async (request) => {
        const credential = await findCredential(db, request.principal.workspaceId, request.params.id)
        if (!credential) throw notFound('Credential')
        return credential
      },
    )

    app.patch(
      '/credentials/:id',
      {
        config: { adminOnly: ADMIN_ONLY },
        schema: { tags: ['credentials'], operationId: 'updateCredential', summary: 'Rename a credential or replace its secret (admins)', params: IdParams, body: UpdateCredentialBody, response: { 200: Credential, ...ProblemResponses } },
      },
      async (request) => {
        const credential = await updateCredential(db, vault, request.principal.workspaceId, request.params.id, request.body)
        if (!credential) throw notFound('Credential')
        return credential
      },
    )

    app.delete(
      '/credentials/:id',
      {
        config: { adminOnly: ADMIN_ONLY },
        schema: { tags: ['credentials'], operationId: 'deleteCredential', summary: 'Delete a credential (admins)', params: IdParams, response: { 204: Type.Null({ description: 'Deleted; no body' }), ...ProblemResponses } },
      },
      async (request, reply) => {
        if (!(await deleteCredential(db, request.principal.workspaceId, request.params.id))) throw notFound('Credential')
        return reply.code(204).send(null)
      },
    )
  }
}
