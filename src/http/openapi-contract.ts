// What the OpenAPI document says beyond the route schemas, so that a client generated from it needs nothing
// written by hand (docs/api-contract.md): the response headers the routes send (ETag, Location, Retry-After,
// Idempotent-Replayed), `Last-Event-ID` as a header parameter of the event streams, the frames of an event
// stream (a stored event, or a `message.delta`), the statuses a route answers beyond the common ones, the
// operations that need no API key, raw image bodies, and each event's `data` typed by its `type`.
// Applied to the document as @fastify/swagger builds it (src/http/docs.ts); the runtime is unchanged.

type Json = { [key: string]: unknown }
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
const PROBLEM = { description: 'A problem (RFC 9457)', content: { 'application/problem+json': { schema: ref('Problem') } } }

const ETAG = { required: true, description: 'The message\'s revision as an entity tag (e.g. `"2"`): send it back in `If-Match` to edit only that revision', schema: { type: 'string', pattern: '^"[0-9]+"$' } }
const LOCATION = { required: true, description: 'The path of the resource created', schema: { type: 'string' } }
const RETRY_AFTER = { description: 'Seconds to wait before trying again', schema: { type: 'string', pattern: '^[0-9]+$' } }
const REPLAYED = { description: '`true` when this is the stored answer to an earlier request with the same `Idempotency-Key`', schema: { type: 'string', enum: ['true'] } }

/** Operations that send an ETag, by success status. */
const ETAG_OPERATIONS: Record<string, string> = { postMessage: '201', getMessage: '200', editMessage: '200', renderMessage: '200' }
/** Operations whose success answer has a Location (the created resource). */
const LOCATION_OPERATIONS = ['createAgent', 'createAgentTemplate', 'createCredential', 'createMcpServer', 'createSchedule', 'createStream', 'createWebhook', 'postMessage', 'saveCycle', 'startRun', 'uploadAsset']
/**
 * Statuses a route answers besides those its schema declares, for routes whose answers are not serialised
 * through a response schema (the A2A endpoints answer JSON-RPC and the card as the SDK shapes them). Every
 * status the tests see a documented route send is checked against the document (test/openapi-statuses.ts).
 */
const EXTRA_STATUSES: Record<string, string[]> = {
  listMcpServerTools: ['502'],
  getExposedAgentCard: ['304', '404', '421', '429', '500'],
  callExposedAgent: ['400', '401', '403', '404', '413', '415', '421', '429', '500'],
}
/** A 304: the entity tag sent in If-None-Match is current. */
const NOT_MODIFIED = { description: 'Not modified: the tag in `If-None-Match` is current; no body' }
/** Operations that take no API key (probes; an inbound hook, which is signed instead). */
const OPEN_OPERATIONS = ['checkLiveness', 'checkReadiness', 'callInboundHook']

/** A `message.delta` frame of an event stream: no `id:` line, never stored. */
export const MESSAGE_DELTA_SCHEMA = {
  title: 'MessageDelta',
  type: 'object',
  additionalProperties: false,
  required: ['streamId', 'messageId', 'offset', 'text'],
  description: 'The `data:` of an SSE frame `event: message.delta` (no `id:`; not stored, not replayed, not sent to webhooks): `text` goes at `offset` of the streaming message\'s text',
  properties: {
    streamId: { type: 'string', format: 'uuid' },
    messageId: { type: 'string', format: 'uuid' },
    offset: { type: 'integer', minimum: 0, description: 'characters (UTF-16 code units) of the message before this delta' },
    text: { type: 'string', description: 'the delta' },
    reset: { type: 'boolean', enum: [true], description: 'present on the first delta of a retried delivery: the message\'s text starts again here' },
  },
}

const LAST_EVENT_ID = {
  name: 'Last-Event-ID',
  in: 'header',
  required: false,
  description: 'With `Accept: text/event-stream`: resume after this event id (what an EventSource sends when it reconnects); wins over `?after=`',
  schema: { type: 'string', pattern: '^(0|[1-9][0-9]{0,14})$' },
}

function addHeader(response: unknown, name: string, header: Json): void {
  if (!isObject(response)) return
  response.headers = { ...(isObject(response.headers) ? response.headers : {}), [name]: header }
}

function successStatus(responses: Json): string | undefined {
  return Object.keys(responses).find((status) => /^2\d\d$/.test(status))
}

/** The document with the contract's additions (see the file's comment). */
export function applyContract(document: Json): Json {
  const paths = isObject(document.paths) ? document.paths : {}
  for (const operations of Object.values(paths)) {
    if (!isObject(operations)) continue
    for (const operation of Object.values(operations)) {
      if (!isObject(operation) || !isObject(operation.responses)) continue
      const id = String(operation.operationId ?? '')
      const responses = operation.responses
      const success = successStatus(responses)
      for (const status of EXTRA_STATUSES[id] ?? []) responses[status] ??= status === '304' ? NOT_MODIFIED : PROBLEM
      if (ETAG_OPERATIONS[id]) addHeader(responses[ETAG_OPERATIONS[id]], 'ETag', ETAG)
      if (success && LOCATION_OPERATIONS.includes(id)) addHeader(responses[success], 'Location', LOCATION)
      const parameters = Array.isArray(operation.parameters) ? (operation.parameters as Json[]) : []
      if (parameters.some((p) => p.in === 'header' && String(p.name).toLowerCase() === 'idempotency-key')) {
        if (success) addHeader(responses[success], 'Idempotent-Replayed', REPLAYED)
        addHeader(responses['409'], 'Retry-After', RETRY_AFTER)
      }
      addHeader(responses['429'], 'Retry-After', RETRY_AFTER)
      addHeader(responses['503'], 'Retry-After', RETRY_AFTER)
      if (OPEN_OPERATIONS.includes(id)) operation.security = []
      // A raw body (an image): a binary string, which generators send as the bytes given (not JSON-encoded).
      const body = isObject(operation.requestBody) && isObject(operation.requestBody.content) ? operation.requestBody.content : {}
      for (const [type, media] of Object.entries(body)) {
        if (!type.startsWith('image/') || !isObject(media)) continue
        media.schema = { type: 'string', format: 'binary', contentMediaType: type, description: `the bytes of the image, as ${type}` }
      }
      const eventStream = Object.values(responses).find((response) => isObject(response) && isObject(response.content) && 'text/event-stream' in response.content) as Json | undefined
      if (eventStream) {
        operation.parameters = [...parameters.filter((p) => String(p.name).toLowerCase() !== 'last-event-id'), LAST_EVENT_ID]
        const content = eventStream.content as Json
        content['text/event-stream'] = {
          schema: { type: 'string', description: 'Server-Sent Events: frames `id:` (the event id), `event:` (its type) and `data:` (a StreamEvent), `event: message.delta` frames without `id:` (data: a MessageDelta), and `: keep-alive` comments' },
          'x-sse-frames': { event: ref('StreamEvent'), 'message.delta': ref('MessageDelta') },
        }
      }
    }
  }
  const components = isObject(document.components) ? document.components : {}
  const schemas = isObject(components.schemas) ? { ...components.schemas } : {}
  schemas.MessageDelta = MESSAGE_DELTA_SCHEMA
  // An event's `data` typed by its `type`: StreamEvent is the union of the events' envelopes (named under `webhooks`).
  const webhooks = isObject(document.webhooks) ? document.webhooks : {}
  const mapping: Record<string, string> = {}
  for (const [type, hook] of Object.entries(webhooks)) {
    const schema = (((hook as Json).post as Json | undefined)?.requestBody as Json | undefined)?.content as Json | undefined
    const target = ((schema?.['application/json'] as Json | undefined)?.schema as Json | undefined)?.$ref
    if (typeof target === 'string') mapping[type] = target
  }
  if (Object.keys(mapping).length > 0) {
    schemas.StreamEvent = {
      title: 'StreamEvent',
      description: 'An event of a stream: its `data` is the payload of its `type` (e.g. `run.updated` carries a RunSummary)',
      oneOf: Object.values(mapping).map(($ref) => ({ $ref })),
      discriminator: { propertyName: 'type', mapping },
    }
  }
  const sorted = Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)))
  return { ...document, paths, components: { ...components, schemas: sorted } }
}
