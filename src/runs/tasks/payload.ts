// The task payload (docs/runs-and-events.md "Tasks"): what every adapter hands an agent, built from the run, its stream, cycle
// and agent at the moment of delivery (or claim).
import type { FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import type { Database } from '../../db/database.js'
import type { Agent } from '../../agents/schemas.js'
import { findStream } from '../../streams/store.js'
import { findCycle } from '../../cycles/store.js'
import { listRecentMessageSummaries, type RecentMessage } from '../../chat/store.js'
import type { JsonObject, TaskPayload } from '../adapters/adapter.js'
import type { Run } from '../schemas.js'
import type { TaskRow } from '../store.js'

/** The base of result URLs: TANDEM_PUBLIC_URL, else the URL the server listens on. */
export function publicBase(app: FastifyInstance): string {
  if (app.config.runs.publicUrl) return app.config.runs.publicUrl
  if (app.listening.origin) return app.listening.origin
  try {
    return app.listeningOrigin
  } catch {
    return `http://${app.config.host.includes(':') ? `[${app.config.host}]` : app.config.host}:${app.config.port}`
  }
}

export async function buildTaskPayload(
  db: Kysely<Database>,
  input: {
    task: TaskRow
    token: string
    run: Run
    agent: Agent
    base: string
    /** The stream's name and the cycle's description when the caller has read them (delivery.ts): not read again. */
    known?: { streamName: string; cycleDescription: string | null }
    /** The stream's latest messages when the caller has read them (delivery.ts, on PostgreSQL): not read again. */
    recentMessages?: RecentMessage[]
  },
): Promise<TaskPayload> {
  const { task, run, agent } = input
  const phase = run.phases.find((p) => p.id === task.phase_run_id)
  if (!phase) throw new Error(`task ${task.id} names a phase its run does not have`)
  const [known, messages] = await Promise.all([
    input.known ??
      Promise.all([findStream(db, task.workspace_id, run.streamId), findCycle(db, task.workspace_id, run.streamId, run.cycleId)]).then(([stream, cycle]) => ({
        streamName: stream?.name ?? '',
        cycleDescription: cycle?.description ?? null,
      })),
    input.recentMessages ?? listRecentMessageSummaries(db, task.workspace_id, run.streamId),
  ])
  return {
    task: { id: task.id, attempt: Number(task.attempt) },
    run: { id: run.id, input: run.input as JsonObject },
    stream: { id: run.streamId, name: known.streamName },
    cycle: { id: run.cycleId, triggerName: run.triggerName, description: known.cycleDescription },
    phase: { id: phase.id, index: phase.index, phaseName: phase.phaseName, goal: phase.goal, instructions: phase.instructions, feedback: task.feedback },
    agent: { id: agent.id, name: agent.name, instructions: agent.instructions, config: agent.config as JsonObject },
    previous: run.phases.filter((p) => p.index < phase.index && p.output !== null).map((p) => ({ phaseName: p.phaseName, text: p.output!.text })),
    messages: messages.map((m) => ({ id: m.id, authorId: m.authorId, authorType: m.authorType, text: m.text, createdAt: m.createdAt })),
    result: { url: `${input.base}/api/tasks/${task.id}/result`, token: input.token },
  }
}
