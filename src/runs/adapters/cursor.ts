// providerType `cursor`: the Cursor background agents API. deliver() launches an agent on `config.repository`
// at `config.ref` (`POST {base}/v0/agents`, the API key as a Bearer token, none under authMode none); each poll() reads
// `GET {base}/v0/agents/{id}` once until FINISHED (the summary and the pull request are the output) or
// ERROR/EXPIRED (agent-failed). The poll state holds the Cursor agent id only.
import type { Adapter, AdapterContext, AgentTarget, DeliveryOutcome, JsonObject } from './adapter.js'
import { callJson, configString, isObject, malformed, vendorBase } from './outcome.js'
import { buildPrompt, promptAsText } from './prompt.js'

export const CURSOR_BASE = 'https://api.cursor.com'
const VENDOR = 'Cursor'
const WORKING = new Set(['CREATING', 'RUNNING', 'PENDING'])

function headers(agent: AgentTarget): Record<string, string> {
  return agent.secret ? { authorization: `Bearer ${agent.secret}` } : {}
}

function finishedText(agent: Record<string, unknown>): string | null {
  const target = isObject(agent.target) ? agent.target : {}
  const parts: string[] = []
  if (typeof agent.summary === 'string' && agent.summary.trim()) parts.push(agent.summary)
  if (typeof target.prUrl === 'string' && target.prUrl) parts.push(`Pull request: ${target.prUrl}`)
  else if (typeof target.branchName === 'string' && target.branchName) parts.push(`Branch: ${target.branchName}`)
  return parts.length > 0 ? parts.join('\n\n') : null
}

/** What one look at a Cursor agent says. */
function statusOutcome(body: unknown, state: JsonObject): DeliveryOutcome {
  if (!isObject(body) || typeof body.status !== 'string') return malformed(VENDOR, 'answered without an agent status')
  if (WORKING.has(body.status)) return { kind: 'poll', state }
  if (body.status === 'FINISHED') {
    const text = finishedText(body)
    return text ? { kind: 'answered', output: { text } } : malformed(VENDOR, 'finished without a summary')
  }
  if (body.status === 'ERROR' || body.status === 'EXPIRED') {
    return { kind: 'failed', code: 'agent-failed', detail: `The Cursor agent ended with status ${body.status}.` }
  }
  return malformed(VENDOR, `answered with an unknown agent status (${body.status.slice(0, 40)})`)
}

async function look(state: JsonObject, agent: AgentTarget, context: AdapterContext): Promise<DeliveryOutcome> {
  const url = `${vendorBase(agent, CURSOR_BASE)}/v0/agents/${encodeURIComponent(String(state.cursorAgentId))}`
  const reply = await callJson(VENDOR, context, url, { method: 'GET', headers: headers(agent) })
  return reply.ok ? statusOutcome(reply.body, state) : reply.outcome
}

export const cursorAdapter: Adapter = {
  providerType: 'cursor',
  unavailable(agent) {
    if (!configString(agent, 'repository')) return 'config.repository is not set (e.g. "https://github.com/acme/app").'
    if (agent.config.ref !== undefined && !configString(agent, 'ref')) return 'config.ref must be a non-empty string.'
    if (agent.config.autoCreatePr !== undefined && typeof agent.config.autoCreatePr !== 'boolean') return 'config.autoCreatePr must be a boolean.'
    return null
  },
  async deliver(payload, agent, context) {
    const ref = configString(agent, 'ref')
    const model = configString(agent, 'model')
    const launched = await callJson(VENDOR, context, `${vendorBase(agent, CURSOR_BASE)}/v0/agents`, {
      method: 'POST',
      headers: headers(agent),
      body: {
        prompt: { text: promptAsText(buildPrompt(payload)) },
        source: { repository: configString(agent, 'repository'), ...(ref ? { ref } : {}) },
        ...(model ? { model } : {}),
        ...(typeof agent.config.autoCreatePr === 'boolean' ? { target: { autoCreatePr: agent.config.autoCreatePr } } : {}),
      },
    })
    if (!launched.ok) return launched.outcome
    if (!isObject(launched.body) || typeof launched.body.id !== 'string' || !launched.body.id) return malformed(VENDOR, 'launched an agent without an id')
    return statusOutcome(launched.body, { cursorAgentId: launched.body.id })
  },
  poll(state, _payload, agent, context) {
    return look(state, agent, context)
  },
}
