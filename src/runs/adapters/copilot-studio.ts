// providerType `copilot_studio`: Bot Framework Direct Line 3.0 with the Direct Line secret as Bearer token
// (`authMode: direct_line`). deliver() starts a conversation and posts the prompt as a `message` activity, then
// hands the engine a poll state; each poll() reads `GET …/activities?watermark=` once and answers with the
// bot's messages as soon as there are any. The state holds ids and the watermark only, never a token.
import type { Adapter, AdapterContext, AgentTarget, DeliveryOutcome, JsonObject } from './adapter.js'
import { callJson, configString, isObject, malformed, vendorBase } from './outcome.js'
import { buildPrompt, promptAsText } from './prompt.js'

export const DIRECT_LINE_BASE = 'https://directline.botframework.com'
const VENDOR = 'Direct Line'
/** The `from.id` of our activities: Direct Line needs a user, and this one marks what we said. */
const USER_ID = 'tandem'

function conversationsUrl(agent: AgentTarget): string {
  return `${vendorBase(agent, DIRECT_LINE_BASE)}/v3/directline/conversations`
}

function headers(agent: AgentTarget): Record<string, string> {
  return { authorization: `Bearer ${agent.secret}` }
}

/** The text of a bot message activity: its `text`, else the text of its adaptive or hero card attachments. */
function activityText(activity: Record<string, unknown>): string {
  if (typeof activity.text === 'string' && activity.text.trim()) return activity.text
  const attachments = Array.isArray(activity.attachments) ? activity.attachments : []
  return attachments
    .map((a) => (isObject(a) && isObject(a.content) ? [a.content.title, a.content.text].filter((t) => typeof t === 'string').join('\n') : ''))
    .filter(Boolean)
    .join('\n\n')
}

async function readReplies(state: JsonObject, agent: AgentTarget, context: AdapterContext): Promise<DeliveryOutcome> {
  const conversationId = String(state.conversationId)
  const watermark = typeof state.watermark === 'string' ? state.watermark : null
  const url = `${conversationsUrl(agent)}/${encodeURIComponent(conversationId)}/activities${watermark ? `?watermark=${encodeURIComponent(watermark)}` : ''}`
  const reply = await callJson(VENDOR, context, url, { method: 'GET', headers: headers(agent) })
  if (!reply.ok) return reply.outcome
  if (!isObject(reply.body) || !Array.isArray(reply.body.activities)) return malformed(VENDOR, 'answered without an activities list')
  const nextWatermark = typeof reply.body.watermark === 'string' ? reply.body.watermark : watermark
  const texts = reply.body.activities
    .filter((a): a is Record<string, unknown> => isObject(a) && a.type === 'message' && !(isObject(a.from) && a.from.id === USER_ID))
    .map(activityText)
    .filter((t) => t.trim() !== '')
  if (texts.length > 0) return { kind: 'answered', output: { text: texts.join('\n\n') } }
  return { kind: 'poll', state: { ...state, watermark: nextWatermark } }
}

export const copilotStudioAdapter: Adapter = {
  providerType: 'copilot_studio',
  // authMode direct_line and its secret are checked by the registry (auth-mode.ts).
  unavailable: () => null,
  async deliver(payload, agent, context) {
    const started = await callJson(VENDOR, context, conversationsUrl(agent), { method: 'POST', headers: headers(agent) })
    if (!started.ok) return started.outcome
    const conversationId = isObject(started.body) ? started.body.conversationId : undefined
    if (typeof conversationId !== 'string' || !conversationId) return malformed(VENDOR, 'started a conversation without a conversationId')
    const locale = configString(agent, 'locale')
    const posted = await callJson(VENDOR, context, `${conversationsUrl(agent)}/${encodeURIComponent(conversationId)}/activities`, {
      method: 'POST',
      headers: headers(agent),
      body: { type: 'message', from: { id: USER_ID, name: 'Tandem' }, text: promptAsText(buildPrompt(payload)), ...(locale ? { locale } : {}) },
    })
    if (!posted.ok) return posted.outcome
    const activityId = isObject(posted.body) && typeof posted.body.id === 'string' ? posted.body.id : null
    return { kind: 'poll', state: { conversationId, activityId, watermark: null } }
  },
  poll(state, _payload, agent, context) {
    return readReplies(state, agent, context)
  },
}
