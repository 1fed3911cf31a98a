// /api/me/inbox (docs/operators.md "The inbox"): a page of what waits for the caller, a live feed of its changes,
// and claims on items. Agent keys are refused by authentication (no route here declares `agentKeys`).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { Page, ProblemResponses } from '../http/schemas.js'
import { decodeCursor, toPage } from '../http/pagination.js'
import { AppError, notFound } from '../http/problem.js'
import { findRun } from '../runs/store.js'
import { statusInWords } from '../runs/schemas.js'
import { openEventStream } from '../http/event-stream.js'
import { claimItem, releaseItem } from './claims.js'
import { decisionItemOf, inboxOf, mayDecide, phaseToolItems, sortKey } from './items.js'
import { mayAct } from '../waits/who.js'
import { InboxConnection } from './live.js'
import { ClaimParams, InboxItem, InboxQuery } from './schemas.js'

const CURSOR_KEY = /^[^|]{1,40}\|[^|]{1,40}\|[a-z_]+:[0-9a-f-]{36}:[^|]{0,200}$/

export const inboxRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.database
  const { claimTtlS } = app.config.operators

  app.get(
    '/me/inbox',
    {
      schema: {
        operationId: 'getInbox', tags: ['inbox'], summary: 'What waits for me: soonest deadline first, then oldest',
        description: 'An item is here exactly when the caller may act on it (the pool rule; with an empty pool, any admin or member). Narrow with `kind`, `streamId` and `claimed=me`. Agent keys: 403.',
        querystring: InboxQuery, response: { 200: Page(InboxItem), ...ProblemResponses },
      },
    },
    async (request) => {
      const { kind, streamId, claimed } = request.query
      const limit = request.query.limit ?? 50
      const after = decodeCursor(request.query.cursor, (key) => CURSOR_KEY.test(key))
      // The filters apply before paging, in the same order and cursor.
      const items = (await inboxOf(db, request.principal)).filter(
        (item) => (kind === undefined || item.kind === kind) && (streamId === undefined || item.streamId === streamId.toLowerCase()) && (claimed === undefined || item.claimedBy === request.principal.handle),
      )
      const rest = after === undefined ? items : items.filter((item) => sortKey(item) > after)
      return toPage(rest.slice(0, limit + 1), limit, sortKey)
    },
  )

  app.get(
    '/me/inbox/events',
    {
      schema: {
        operationId: 'followInbox', tags: ['inbox'], summary: 'Follow my inbox live (Server-Sent Events)',
        description:
          'On connect, each current item as `inbox.added`; then `inbox.added` and `inbox.removed` (data: the item) as the inbox changes; a `: keep-alive` comment every 15 s. ' +
          'The feed ends after TANDEM_SSE_MAX_LIFETIME_S; connect again (the current items come again).',
        response: { 200: { description: 'text/event-stream', content: { 'text/event-stream': { schema: Type.String() } } }, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const raw = openEventStream(request, reply)
      const connection = new InboxConnection(raw, db, app.events, request.principal, { keepAliveMs: app.config.sseKeepAliveMs, maxBufferBytes: app.config.sseMaxBufferBytes, maxLifetimeMs: app.config.sseMaxLifetimeMs }, request.log)
      if (raw.destroyed) connection.close()
    },
  )

  /**
   * The phase's current wait as the caller sees it — its decision, or (awaiting_tool_approval, awaiting_input) the
   * oldest call it waits for — after checking that the caller may act on it.
   */
  async function itemFor(request: { principal: Parameters<typeof inboxOf>[1]; params: { runId: string; phaseRunId: string } }) {
    const caller = request.principal
    const runId = request.params.runId.toLowerCase()
    const phaseRunId = request.params.phaseRunId.toLowerCase()
    const run = await findRun(db, caller.workspaceId, runId)
    if (!run) throw notFound('Run')
    const phase = run.phases.find((p) => p.id === phaseRunId)
    if (!phase) throw notFound('Phase')
    const [call] = phase.status === 'awaiting_tool_approval' || phase.status === 'awaiting_input' ? await phaseToolItems(db, run, phase) : []
    const may = call ? mayAct(caller, phase, call.callId!) : mayDecide(caller, phase)
    if (!may) throw new AppError('forbidden', `Only ${phase.operatorPool.map((h) => `@${h.replace(/^@/, '')}`).join(', ')} may decide phase "${phase.phaseName}".`)
    if (phase.status !== 'awaiting_decision' && !call) throw new AppError('not-awaiting-decision', `Phase "${phase.phaseName}" ${statusInWords(phase.status)}: it awaits no decision, tool approval or answer.`)
    return { run, phase, call }
  }

  app.post(
    '/runs/:runId/phases/:phaseRunId/claim',
    {
      schema: {
        operationId: 'claimInboxItem', tags: ['inbox'], summary: 'Say you are on it: claim a phase awaiting a decision, a tool approval or an answer',
        description:
          `Marks the phase's current wait \`claimedBy\` your handle for TANDEM_CLAIM_TTL_S (${claimTtlS} s here): its decision, or the tool approvals / question it waits for ` +
          '(the response is the oldest such item). A claim by someone else replaces it. A signal, not a lock: others may still decide.',
        params: ClaimParams, response: { 200: InboxItem, ...ProblemResponses },
      },
    },
    async (request) => {
      const caller = request.principal
      const { run, phase, call } = await itemFor(request)
      await claimItem(db, { workspaceId: caller.workspaceId, runId: run.id, phaseRunId: phase.id, principalId: caller.principalId, handle: caller.handle, ttlS: claimTtlS })
      return call ? { ...call, claimedBy: caller.handle } : decisionItemOf(db, run, phase)
    },
  )

  app.delete(
    '/runs/:runId/phases/:phaseRunId/claim',
    {
      schema: {
        operationId: 'releaseInboxItem', tags: ['inbox'], summary: 'Release a claim',
        description: 'Anyone who may decide the phase may release its claim (a claim is a signal, not a lock). 204 also when there was none.',
        params: ClaimParams, response: { 204: Type.Null(), ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const { phase } = await itemFor(request)
      await releaseItem(db, phase.id)
      return reply.code(204).send(null)
    },
  )
}
