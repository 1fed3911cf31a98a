// The job handlers of the process, by name (see index.ts for the API).
import type { FastifyInstance } from 'fastify'

export interface JobContext {
  app: FastifyInstance
  /** 1 on the first run of the job. */
  attempt: number
  jobKey: string | null
  /** Aborted when the process shuts down: stop and throw, the job runs again later. */
  signal: AbortSignal
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type JobHandler = (payload: any, context: JobContext) => Promise<void>

export const handlers = new Map<string, JobHandler>()

export function registerJobHandler(name: string, handler: JobHandler): void {
  if (handlers.has(name) && handlers.get(name) !== handler) throw new Error(`job handler ${name} is registered twice`)
  handlers.set(name, handler)
}

export function jobHandler(name: string): JobHandler | undefined {
  return handlers.get(name)
}

