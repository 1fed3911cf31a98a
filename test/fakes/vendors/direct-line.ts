// A local Bot Framework Direct Line 3.0 service: `POST /v3/directline/conversations` starts a conversation,
// `POST …/{id}/activities` takes the user's message, `GET …/{id}/activities?watermark=` returns what came after
// the watermark (the user's own message echoed, as Direct Line does, and the bot's typing and replies once it
// has been asked `looksBeforeReply` times).
import { failureReply, script, startHttpFake, type HttpFake } from './http.js'

export interface DirectLineStep {
  status?: number
  retryAfter?: string
  raw?: string
  delayMs?: number
}

interface Conversation {
  id: string
  activities: any[]
  looks: number
  replied: boolean
}

export async function startDirectLineFake(secret: string) {
  const starts = script<DirectLineStep>({})
  const looks = script<DirectLineStep>({})
  const bot = { replies: ['It is a bug.'], looksBeforeReply: 1 }
  const conversations = new Map<string, Conversation>()
  const fake: HttpFake = await startHttpFake((exchange) => {
    if (exchange.headers.authorization !== `Bearer ${secret}`) return { status: 403, body: { error: { code: 'BadArgument', message: 'Invalid secret' } } }
    if (exchange.method === 'POST' && exchange.path === '/v3/directline/conversations') {
      const failure = failureReply(starts.take())
      if (failure) return failure
      const id = `conv-${conversations.size + 1}`
      conversations.set(id, { id, activities: [], looks: 0, replied: false })
      return { status: 201, body: { conversationId: id, token: 'conversation-token', expires_in: 1800, streamUrl: `wss://directline.invalid/${id}` } }
    }
    const match = /^\/v3\/directline\/conversations\/([^/]+)\/activities$/.exec(exchange.path)
    const conversation = match ? conversations.get(decodeURIComponent(match[1] as string)) : undefined
    if (!conversation) return { status: 404, body: { error: { code: 'BadArgument', message: 'Conversation not found' } } }
    if (exchange.method === 'POST') {
      const id = `${conversation.id}|${String(conversation.activities.length).padStart(7, '0')}`
      conversation.activities.push({ ...exchange.body, id, conversation: { id: conversation.id }, timestamp: new Date().toISOString() })
      return { body: { id } }
    }
    const step = looks.take()
    const failure = failureReply(step)
    if (failure) return failure
    conversation.looks += 1
    if (!conversation.replied && conversation.looks > bot.looksBeforeReply) {
      conversation.replied = true
      const userActivity = conversation.activities.find((a) => a.from?.id !== 'bot')
      conversation.activities.push({ type: 'typing', id: `${conversation.id}|typing`, from: { id: 'bot', name: 'Copilot' } })
      for (const text of bot.replies) {
        conversation.activities.push({ type: 'message', id: `${conversation.id}|bot${conversation.activities.length}`, from: { id: 'bot', name: 'Copilot', role: 'bot' }, text, replyToId: userActivity?.id })
      }
    }
    const watermark = Number(exchange.url.searchParams.get('watermark') ?? 0)
    return { delayMs: step.delayMs ?? 0, body: { activities: conversation.activities.slice(watermark), watermark: String(conversation.activities.length) } }
  })
  return { ...fake, starts, looks, bot, conversations }
}
