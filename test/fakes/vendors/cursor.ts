// A local Cursor background agents API: `POST /v0/agents` launches (the key as a Bearer token;
// apiKey null: a keyless gateway),
// `GET /v0/agents/{id}` reports the next scripted status of that agent.
import { failureReply, script, startHttpFake, type HttpFake } from './http.js'

export interface CursorStep {
  status?: number
  retryAfter?: string
  raw?: string
  delayMs?: number
  /** The agent's status in the answer (CREATING, RUNNING, FINISHED, ERROR, EXPIRED). */
  agentStatus?: string
  summary?: string
  prUrl?: string
  /** The agent reports no branch (nothing pushed). */
  noBranch?: boolean
}

export async function startCursorFake(apiKey: string | null) {
  const launches = script<CursorStep>({ agentStatus: 'CREATING' })
  const looks = script<CursorStep>({ agentStatus: 'FINISHED', summary: 'Fixed the login bug.', prUrl: 'https://github.com/acme/app/pull/7' })
  const launched: Array<{ id: string; body: any }> = []
  const agentBody = (id: string, step: CursorStep, body: any) => ({
    id,
    name: 'Tandem task',
    status: step.agentStatus,
    source: body.source,
    target: { ...(step.noBranch ? {} : { branchName: 'cursor/fix-login' }), url: `https://cursor.com/agents?id=${id}`, ...(step.prUrl ? { prUrl: step.prUrl } : {}), autoCreatePr: false },
    ...(step.summary ? { summary: step.summary } : {}),
    createdAt: new Date().toISOString(),
  })
  const fake: HttpFake = await startHttpFake((exchange) => {
    if (apiKey !== null && exchange.headers.authorization !== `Bearer ${apiKey}`) return { status: 401, body: { error: 'Unauthorized' } }
    if (exchange.method === 'POST' && exchange.path === '/v0/agents') {
      const step = launches.take()
      const failure = failureReply(step)
      if (failure) return failure
      const id = `bc-${launched.length + 1}`
      launched.push({ id, body: exchange.body })
      return { status: 201, delayMs: step.delayMs ?? 0, body: agentBody(id, step, exchange.body) }
    }
    const match = /^\/v0\/agents\/([^/]+)$/.exec(exchange.path)
    const agent = match && exchange.method === 'GET' ? launched.find((a) => a.id === match[1]) : undefined
    if (!agent) return { status: 404, body: { error: 'Agent not found' } }
    const step = looks.take()
    return failureReply(step) ?? { delayMs: step.delayMs ?? 0, body: agentBody(agent.id, step, agent.body) }
  })
  return { ...fake, launches, looks, launched }
}
