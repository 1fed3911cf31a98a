// Streams scripted Server-Sent Events for the vendor fakes: deltas `gapMs` apart, optionally cut mid-stream (the
// socket destroyed after `cutAfter` deltas) or never ending (`forever`: a delta every `gapMs` until the client leaves).
import type { ServerResponse } from 'node:http'

export interface StreamStep {
  deltas?: string[]
  gapMs?: number
  cutAfter?: number
  forever?: boolean
}

export function streamEvents(res: ServerResponse, step: StreamStep, frames: { head: string[]; delta: (text: string) => string; tail: string[] }): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
  for (const frame of frames.head) res.write(frame)
  const deltas = step.deltas ?? []
  let sent = 0
  let timer: NodeJS.Timeout | undefined
  res.on('close', () => clearTimeout(timer))
  const next = () => {
    if (res.destroyed) return
    if (step.cutAfter !== undefined && sent >= step.cutAfter) {
      res.socket?.destroy()
      return
    }
    if (step.forever) {
      res.write(frames.delta(`tick ${sent++} `))
      timer = setTimeout(next, step.gapMs ?? 50)
      return
    }
    if (sent < deltas.length) {
      res.write(frames.delta(deltas[sent++] as string))
      timer = setTimeout(next, step.gapMs ?? 0)
      return
    }
    for (const frame of frames.tail) res.write(frame)
    res.end()
  }
  next()
}

export const sse = (event: string | null, data: unknown) => `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`
