// A client of an inbox feed (GET /api/me/inbox/events, or any server of the same frames) for tests: real sockets,
// frames parsed by eventsource-parser, each event's data as JSON.
import { createParser } from 'eventsource-parser'

export interface InboxFeed {
  res: Response
  events: Array<{ event: string; data: any }>
  /** How many comments (`: keep-alive`) arrived. */
  comments(): number
  /** Ends the request and waits for the reading to stop. */
  close(): Promise<void>
}

export async function openInboxFeed(url: string, headers: Record<string, string> = {}): Promise<InboxFeed> {
  const controller = new AbortController()
  const events: InboxFeed['events'] = []
  let comments = 0
  const res = await fetch(url, { headers: { ...headers, accept: 'text/event-stream' }, signal: controller.signal })
  const parser = createParser({ onEvent: (e) => events.push({ event: e.event ?? 'message', data: JSON.parse(e.data) }), onComment: () => comments++ })
  const reading = (async () => {
    const decoder = new TextDecoder()
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }))
  })().catch(() => {})
  return {
    res,
    events,
    comments: () => comments,
    async close() {
      controller.abort()
      await reading
    },
  }
}
