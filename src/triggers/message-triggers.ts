// Message triggers (docs/operators.md "Message triggers"): storage, the match, and the job that fires them.
// A new message is matched inside the transaction that posts it (chat/store.ts insertMessage): when a trigger
// matches, a job keyed by the message is enqueued there, so it exists exactly when the message does. The job
// records one pass per message (a retried job finds it and stops) in the transaction that starts the runs.
import type { Expression, Kysely, Selectable } from 'kysely'
import type { Database } from '../db/database.js'
import { prepared } from '../db/prepared.js'
import { columnsOf } from '../db/columns.js'
import { newId, now } from '../ids.js'
import { enqueueJob } from '../jobs/index.js'
import type { Message } from '../chat/schemas.js'
import { findMessage } from '../chat/store.js'
import type { MessageTriggerTable } from './operators.table.js'
import { fireStreamTriggerInJob, type JobFireDeps } from './fire.js'
import { triggeredCycles } from '../runs/service.js'
import { AppError } from '../http/problem.js'
import { chainOf, joinChain, MAX_RUNS_PER_CHAIN, purgeChains, reserveRuns } from './chains.js'
import { recordRefusal, type RefusalSink } from './refusals.js'
import { causeOfRun } from '../tracing/triggered.js'

declare module '../jobs/registry.js' {
  interface JobPayloads {
    'triggers.message': MessageTriggerJob
  }
}

export const MESSAGE_TRIGGER_JOB = 'triggers.message'
/** A message written by a run this deep fires nothing. */
export const MAX_TRIGGER_DEPTH = 5
/** A message's pass is kept this long: far longer than its job can be retried (25 attempts, at most 6 h apart). */
export const PASS_RETENTION_MS = 30 * 24 * 60 * 60 * 1000
/** `input.message.text` is cut to this many characters, so the input stays within its 64 KiB bound. */
export const MAX_TRIGGER_TEXT = 16000

type TriggerRow = Selectable<MessageTriggerTable>

/** The run that wrote a message (the engine passes it when it posts an agent's output). */
export interface MessageOrigin {
  runId: string
  cycleId: string
  depth: number
}

export interface MessageTriggerJob {
  messageId: string
  workspaceId: string
  triggerIds: string[]
  origin: MessageOrigin | null
}

export interface MessageTrigger {
  id: string
  streamId: string
  triggerName: string
  match: { mention: string | null; prefix: string | null; authorType: 'principal' | 'agent' | null }
  createdBy: string
  createdAt: string
}

export function toMessageTrigger(row: TriggerRow): MessageTrigger {
  return {
    id: row.id,
    streamId: row.stream_id,
    triggerName: row.trigger_name,
    match: { mention: row.mention, prefix: row.prefix, authorType: row.author_type },
    createdBy: row.created_by,
    createdAt: row.created_at,
  }
}

export async function insertMessageTrigger(
  db: Kysely<Database>,
  input: { workspaceId: string; streamId: string; triggerName: string; match: MessageTrigger['match']; createdBy: string },
): Promise<MessageTrigger> {
  const row: TriggerRow = {
    id: newId(), workspace_id: input.workspaceId, stream_id: input.streamId, trigger_name: input.triggerName,
    // Stored without the `@`: a mention is a handle.
    mention: input.match.mention === null ? null : input.match.mention.replace(/^@/, '').toLowerCase(),
    prefix: input.match.prefix, author_type: input.match.authorType, created_by: input.createdBy, created_at: now(),
  }
  await db.insertInto('message_triggers').values(row).execute()
  return toMessageTrigger(row)
}

export async function listMessageTriggers(db: Kysely<Database>, workspaceId: string, streamId: string): Promise<MessageTrigger[]> {
  const rows = await db.selectFrom('message_triggers').selectAll().where('workspace_id', '=', workspaceId).where('stream_id', '=', streamId).orderBy('id').execute()
  return rows.map(toMessageTrigger)
}

export async function deleteMessageTrigger(db: Kysely<Database>, workspaceId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('message_triggers').where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** Whether `text` mentions `@handle` (case-insensitive; not part of a longer handle or an e-mail address; a full stop may follow). */
export function mentions(text: string, handle: string): boolean {
  return new RegExp(`(?:^|[^a-z0-9._@-])@${escapeRegExp(handle)}(?![a-z0-9_-]|\\.[a-z0-9_-])`, 'i').test(text)
}

/** Every given field of the match holds (a trigger with none matches nothing: the API refuses it). */
export function matchesMessage(trigger: MessageTrigger['match'], message: Pick<Message, 'text' | 'authorType'>): boolean {
  if (trigger.mention === null && trigger.prefix === null && trigger.authorType === null) return false
  if (trigger.authorType !== null && trigger.authorType !== message.authorType) return false
  if (trigger.prefix !== null && !message.text.trimStart().toLowerCase().startsWith(trigger.prefix.toLowerCase())) return false
  if (trigger.mention !== null && !mentions(message.text, trigger.mention)) return false
  return true
}

/** The loop guard: may this message start runs at all? */
export function mayFire(message: Pick<Message, 'authorType'>, origin: MessageOrigin | null): boolean {
  return !(message.authorType === 'agent' && origin !== null && origin.depth >= MAX_TRIGGER_DEPTH)
}

/**
 * Called by insertMessage in the posting transaction: when a trigger of the stream matches, a job fires it.
 * One indexed read per message; nothing more when the stream has no message triggers.
 */
const TRIGGER_COLUMNS = columnsOf<MessageTriggerTable>({
  id: true, workspace_id: true, stream_id: true, trigger_name: true, mention: true, prefix: true, author_type: true, created_by: true, created_at: true,
})
const selectOfStream = prepared(1, (db, streamId: Expression<string>) => db.selectFrom('message_triggers').select(TRIGGER_COLUMNS).where('stream_id', '=', streamId))

export async function queueMessageTriggers(db: Kysely<Database>, workspaceId: string, message: Message, origin: MessageOrigin | null): Promise<void> {
  const rows = await selectOfStream(db, message.streamId)
  if (rows.length === 0 || !mayFire(message, origin)) return
  const triggerIds = rows.map(toMessageTrigger).filter((trigger) => matchesMessage(trigger.match, message)).map((trigger) => trigger.id)
  if (triggerIds.length === 0) return
  const job: MessageTriggerJob = { messageId: message.id, workspaceId, triggerIds, origin: message.authorType === 'agent' ? origin : null }
  await enqueueJob(db, MESSAGE_TRIGGER_JOB, job, { jobKey: `message-trigger:${message.id}` })
}

/**
 * The job: fires each matched trigger once (a trigger name once, however many triggers name it). The runs it
 * would start are counted first and reserved in the message's chain (./chains.ts): past the chain's bound the
 * message starts none, and the refusal is logged and counted.
 */
export async function fireMessageTriggers(deps: JobFireDeps & RefusalSink, db: Kysely<Database>, job: MessageTriggerJob): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const pass = await trx.insertInto('message_trigger_passes').values({ message_id: job.messageId, created_at: now() }).onConflict((oc) => oc.doNothing()).returning('message_id').executeTakeFirst()
    if (!pass) return
    const expired = new Date(Date.now() - PASS_RETENTION_MS).toISOString()
    await trx.deleteFrom('message_trigger_passes').where('created_at', '<', expired).execute()
    await purgeChains(trx, expired)
    const message = await findMessage(trx, job.workspaceId, job.messageId)
    if (!message || job.triggerIds.length === 0) return
    const rows = await trx.selectFrom('message_triggers').selectAll().where('id', 'in', job.triggerIds).orderBy('id').execute()
    const names = new Set<string>()
    const triggers = rows.map(toMessageTrigger).filter((trigger) => !names.has(trigger.triggerName.toLowerCase()) && names.add(trigger.triggerName.toLowerCase()))
    let planned = 0
    for (const trigger of triggers) {
      try {
        planned += (await triggeredCycles(trx, job.workspaceId, trigger.streamId, trigger.triggerName)).filter((cycle) => cycle.id !== job.origin?.cycleId).length
      } catch (error) {
        if (!(error instanceof AppError) || error.kind !== 'too-many-runs') throw error
        // fireStreamTriggerInJob below logs it and starts nothing for this trigger.
      }
    }
    if (planned === 0) return
    const root = await chainOf(trx, message.id, job.origin?.runId ?? null)
    const reserved = await reserveRuns(trx, job.workspaceId, root, planned)
    if (!reserved.granted) {
      recordRefusal(deps, 'message-chain', { streamId: message.streamId, messageId: message.id, chain: root, runs: reserved.runs, wanted: planned },
        `a message trigger started nothing: the message's chain has started ${reserved.runs} runs, and one chain starts at most ${MAX_RUNS_PER_CHAIN}`)
      return
    }
    // The run that wrote the message is the runs' cause in traces (a person's message keeps no request's span).
    const traceLink = job.origin ? await causeOfRun(trx, job.origin.runId) : null
    for (const trigger of triggers) {
      const runs = await fireStreamTriggerInJob(deps, trx, {
        workspaceId: job.workspaceId,
        streamId: trigger.streamId,
        triggerName: trigger.triggerName,
        input: { message: { id: message.id, text: message.text.slice(0, MAX_TRIGGER_TEXT), authorId: message.authorId, authorType: message.authorType } },
        // A person's message starts the run for that person; an agent's, for whoever set the trigger up.
        createdBy: message.authorType === 'principal' ? message.authorId : trigger.createdBy,
        trigger: { kind: 'message', id: trigger.id },
        depth: job.origin ? job.origin.depth + 1 : 0,
        ...(job.origin ? { excludeCycleId: job.origin.cycleId } : {}),
        traceLink,
      })
      for (const run of runs) await joinChain(trx, root, run.id)
    }
  })
}
