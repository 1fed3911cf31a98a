// /api/cycles: draft a cycle for a stream (not stored), and save, list and read cycle definitions.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { NIL_UUID, Page, PageQuery, Problem, ProblemResponses } from '../http/schemas.js'
import { decodeCursor, toPage } from '../http/pagination.js'
import { AppError, notFound, type FieldError } from '../http/problem.js'
import { traceparentFor } from '../http/trace.js'
import { allDraftingAgentsIfFew, existingAgentIds, listDraftingAgents } from '../agents/store.js'
import { StreamIdParams } from '../streams/schemas.js'
import { requireStream } from '../streams/store.js'
import { CycleParams, DraftBody, DraftResult, MODES, SaveCycleBody, SavedCycle, SavedCycleAnswer } from './schemas.js'
import { policyProblems } from './policy.js'
import { poolWarnings, quorumWarnings } from './pool.js'
import { insertCycle, findCycle, listCycles } from './store.js'
import type { Drafter } from '../drafter/types.js'
import { finishDraft, UnfinishableDraftError } from '../drafter/finish.js'
import { searchPlanOffLoop } from '../drafter/builtin.js'

export const cycleRoutes = (drafter: Drafter): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { db } = app.database


    app.post(
      '/cycles/streams/:streamId/cycles/draft',
      {
        schema: {
          tags: ['cycles'],
          operationId: 'draftCycle', summary: 'Draft a cycle for a stream',
          description:
            '`generate` builds a new cycle from `prompt`; `refine` applies `prompt` as edit instructions to `current`. ' +
            'The draft is not stored. Phases are assigned to agents of the stream\'s workspace; when none fits, `agentId` is the nil UUID and a warning says so. ' +
            '502 `bad-gateway` when the model\'s answer is unusable, 503 `service-unavailable` when too many drafts are waiting, 504 `gateway-timeout` when the model is too slow.',
          params: StreamIdParams,
          body: DraftBody,
          response: { 200: DraftResult, 502: Problem, 504: Problem, ...ProblemResponses },
        },
      },
      async (request) => {
        const { workspaceId } = request.principal
        const stream = await requireStream(db, workspaceId, request.params.streamId)
        const mode = MODES[request.body.mode]
        const { prompt, current } = request.body
        if (mode === 'refine' && !current) {
          throw new AppError('unprocessable', '`refine` edits an existing cycle: send it as `current`.', [{ pointer: '/current', detail: 'is required when mode is refine' }])
        }
        const assigned = [...new Set((current?.phasesTemplate ?? []).map((p) => p.agentId.toLowerCase()).filter((id) => id !== NIL_UUID))]
        // A small workspace is drafted over all its agents; a larger one over those the search plan finds.
        let agents = await allDraftingAgentsIfFew(db, workspaceId)
        if (agents === null) {
          const plan = await searchPlanOffLoop({ mode, prompt, current })
          const queries = plan.queries.map((terms) => terms.map(([word, factor, nameOnly]) => ({ word, factor, nameOnly })))
          agents = await listDraftingAgents(db, workspaceId, { queries, names: plan.names }, assigned)
        }
        request.log.debug({ streamId: stream.id, mode, engine: drafter.name }, 'drafting')
        const outcome = await drafter.draft({ mode, prompt, current, agents })
        try {
          return { mode, engine: drafter.name, ...finishDraft(outcome) }
        } catch (error) {
          if (error instanceof UnfinishableDraftError) throw new AppError('bad-gateway', `The ${drafter.name} engine's draft could not be finished: ${error.message}.`)
          throw error
        }
      },
    )

    app.post(
      '/cycles/streams/:streamId/cycles',
      {
        config: { idempotent: true },
        schema: {
          tags: ['cycles'],
          operationId: 'saveCycle', summary: 'Save a cycle definition',
          description: 'Answers the saved cycle as GET returns it, plus `warnings` when an operatorPool names a handle that no principal of the workspace has (one per phase and handle), or fewer handles than the phase\'s quorum (the cycle is saved all the same). `policy` (optional, beside the draft\'s fields): reminders, escalation, expiry and quorum of its decisions (docs/operators.md).',
          params: StreamIdParams,
          body: SaveCycleBody,
          response: { 201: SavedCycleAnswer, ...ProblemResponses },
        },
      },
      async (request, reply) => {
        const { workspaceId } = request.principal
        const cycle = await reply.withTransaction(async (trx) => {
          const stream = await requireStream(trx, workspaceId, request.params.streamId)
          const referenced = [...new Set(request.body.phasesTemplate.map((p) => p.agentId.toLowerCase()).filter((id) => id !== NIL_UUID))]
          const known = new Set(await existingAgentIds(trx, workspaceId, referenced))
          const phases = request.body.phasesTemplate.map((p) => ({ ...p, id: p.id.toLowerCase(), agentId: p.agentId.toLowerCase() }))
          const errors: FieldError[] = []
          const seen = new Set<string>()
          phases.forEach((phase, index) => {
            if (phase.agentId !== NIL_UUID && !known.has(phase.agentId)) {
              errors.push({ pointer: `/phasesTemplate/${index}/agentId`, detail: 'is not an agent of this workspace (use the nil UUID for none)' })
            }
            if (seen.has(phase.id)) errors.push({ pointer: `/phasesTemplate/${index}/id`, detail: 'repeats the id of an earlier phase' })
            seen.add(phase.id)
          })
          if (request.body.policy) errors.push(...policyProblems(request.body.policy, phases.map((p) => p.id)))
          if (errors.length > 0) {
            // A bad policy is bad input (a 400, as its schema's problems are, naming every problem found); without
            // one, a missing agent or a repeated id is a 422 as before.
            if (errors.some((e) => e.pointer.startsWith('/policy/'))) throw new AppError('validation-error', `The body has ${errors.length} problem${errors.length === 1 ? '' : 's'}; see errors.`, errors)
            throw new AppError('unprocessable', 'The cycle refers to things that do not exist, repeats ids or has a bad policy; see errors.', errors)
          }
          const cycle = await insertCycle(trx, workspaceId, stream.id, { ...request.body, phasesTemplate: phases }, traceparentFor(request))
          reply.code(201).header('location', `/api/cycles/streams/${stream.id}/cycles/${cycle.id}`)
          // Only when there is something to say, so that the answer is otherwise the cycle as GET returns it.
          const warnings = [...(await poolWarnings(trx, workspaceId, phases)), ...quorumWarnings(phases, request.body.policy)]
          return warnings.length > 0 ? { ...cycle, warnings } : cycle
        })
        return reply.send(cycle)
      },
    )

    app.get(
      '/cycles/streams/:streamId/cycles',
      {
        schema: { tags: ['cycles'], operationId: 'listCycles', summary: 'List saved cycles, oldest first', params: StreamIdParams, querystring: PageQuery, response: { 200: Page(SavedCycle), ...ProblemResponses } },
      },
      async (request) => {
        const { workspaceId } = request.principal
        const stream = await requireStream(db, workspaceId, request.params.streamId)
        const limit = request.query.limit ?? 50
        return toPage(await listCycles(db, workspaceId, stream.id, limit + 1, decodeCursor(request.query.cursor)), limit)
      },
    )

    app.get(
      '/cycles/streams/:streamId/cycles/:cycleId',
      { schema: { tags: ['cycles'], operationId: 'getCycle', summary: 'Read a saved cycle', params: CycleParams, response: { 200: SavedCycle, ...ProblemResponses } } },
      async (request) => {
        const { workspaceId } = request.principal
        const stream = await requireStream(db, workspaceId, request.params.streamId)
        const cycle = await findCycle(db, workspaceId, stream.id, request.params.cycleId)
        if (!cycle) throw notFound('Cycle')
        return cycle
      },
    )
  }
