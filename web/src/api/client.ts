// The API client: openapi-fetch typed by schema.d.ts (generated from /openapi.json), the key from the tab's
// session storage, and every error answer turned into an ApiError carrying its problem details.
import createClient, { type Middleware } from 'openapi-fetch'
import type { paths } from './schema'

type Ok<T> = T extends { responses: { 200: { content: { 'application/json': infer B } } } } ? B : never
type Body<T> = T extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never
export type Agent = Ok<paths['/api/agents/{id}']['get']>
export type AgentCreate = Body<paths['/api/agents']['post']>
export type AgentPatch = Body<paths['/api/agents/{id}']['patch']>
export type AgentTemplate = Ok<paths['/api/agent-templates/{id}']['get']>
export type Asset = Ok<paths['/api/assets/{id}']['get']>
export type Schedule = Ok<paths['/api/schedules/{id}']['get']>
export type ScheduleCreate = Body<paths['/api/streams/{streamId}/schedules']['post']>
export type MessageTriggerCreate = Body<paths['/api/streams/{streamId}/message-triggers']['post']>
export type Message = Ok<paths['/api/chat/messages/{id}']['get']>
export type DraftResult = Ok<paths['/api/cycles/streams/{streamId}/cycles/draft']['post']>
export type CycleDefinition = Body<paths['/api/cycles/streams/{streamId}/cycles']['post']>
export type Run = Ok<paths['/api/runs/{runId}']['get']>
export type PhaseRun = Run['phases'][number]
export type Me = Ok<paths['/api/me']['get']>
export type Credential = Ok<paths['/api/credentials/{id}']['get']>
export type DecisionBody = Body<paths['/api/runs/{runId}/phases/{phaseRunId}/decision']['post']>

const KEY_STORAGE = 'tandem.apiKey'

export const apiKey = {
  get: (): string | null => sessionStorage.getItem(KEY_STORAGE),
  set: (key: string) => sessionStorage.setItem(KEY_STORAGE, key),
  clear: () => sessionStorage.removeItem(KEY_STORAGE),
}

export interface FieldError { pointer: string; detail: string }
export interface Problem { type?: string; title?: string; status?: number; detail?: string; errors?: FieldError[] }

export class ApiError extends Error {
  constructor(readonly status: number, readonly problem: Problem) {
    super(problem.detail ?? problem.title ?? `HTTP ${status}`)
  }
  /** The detail of the field a pointer names (`/name`), if the server named it. */
  fieldError(pointer: string): string | undefined {
    return this.problem.errors?.filter((e) => e.pointer === pointer || e.pointer.startsWith(`${pointer}/`)).map((e) => e.detail).join('; ') || undefined
  }
}

function authorize(headers: Headers) {
  const key = apiKey.get()
  if (key && !headers.has('authorization')) headers.set('authorization', `Bearer ${key}`)
  // A label, not a credential: the server records `via: "console"` on the decisions made here.
  headers.set('tandem-client', 'console')
}

const auth: Middleware = {
  onRequest({ request }) {
    authorize(request.headers)
    return request
  },
}

export const api = createClient<paths>({ baseUrl: '' })
api.use(auth)

let onUnauthorized: () => void = () => {}
export function whenUnauthorized(handler: () => void) {
  onUnauthorized = handler
}

async function problemOf(response: Response): Promise<Problem> {
  try {
    return (await response.json()) as Problem
  } catch {
    return { status: response.status, detail: `${response.status} ${response.statusText}` }
  }
}

/** `data` of an openapi-fetch answer, or an ApiError. */
export async function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call
  if (response.ok) return data as T
  if (response.status === 401) onUnauthorized()
  throw new ApiError(response.status, (error as Problem | undefined) ?? { status: response.status })
}

/** A request outside the typed client (the key check of the sign-in form): the same key and errors. */
export async function request<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  const init: RequestInit = { method, headers: new Headers(headers) }
  if (body !== undefined) {
    ;(init.headers as Headers).set('content-type', 'application/json')
    init.body = JSON.stringify(body)
  }
  authorize(init.headers as Headers)
  const response = await fetch(path, init)
  if (!response.ok) {
    if (response.status === 401) onUnauthorized()
    throw new ApiError(response.status, await problemOf(response))
  }
  return (response.status === 204 ? undefined : await response.json()) as T
}

export { authorize }
