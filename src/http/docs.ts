// The OpenAPI 3.1 document (generated from the route schemas) and the interactive reference at /docs.
// swagger-ui's assets are served from the npm package: the reference works offline.
import type { FastifyInstance } from 'fastify'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { problemKinds } from './problem.js'

export async function registerDocs(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Tandem API',
        version: '0.1.0',
        description:
          'AI agents and human operators working together on streams. Errors are RFC 9457 problem details; their `type` is one of: ' +
          problemKinds().map((k) => `\`${k.type}\` (${k.status})`).join(', ') + '.',
      },
      components: {
        securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'An API key from `npm run cli -- keys create`' } },
      },
      security: [{ apiKey: [] }],
    },
  })
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // No call to swagger.io's validator: the reference loads nothing from beyond this server.
    uiConfig: { validatorUrl: null },
    // The plugin's policy with its inline script and style hashes, minus what reaches beyond this server
    // (validator.swagger.io, any https: font or style) and upgrade-insecure-requests (breaks http://localhost).
    staticCSP: true,
    transformStaticCSP: (policy) =>
      policy
        .replace(' validator.swagger.io', '')
        .replaceAll(' https:', '')
        .replace(' upgrade-insecure-requests;', '')
        .replaceAll(' ;', ';')
        .concat(" connect-src 'self'; form-action 'self';"),
  })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}
