// The tools that act on what waits for a person — a phase's decision, a tool call's approval, an agent's question —
// call the run engine's service functions directly, as their REST routes do, in one transaction (run again after a
// deadlock, src/db/retry.ts), with `via: "mcp"`.
// A refusal is the service's AppError, turned into the problem REST would answer. The result is cleaned to the
// route's response schema, as the route's serializer does, so that it is the body REST answers.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { TSchema } from 'typebox'
import { Value } from 'typebox/value'
import { AppError, contendedProblem, toProblem } from '../http/problem.js'
import { TransactionContended, runTransaction } from '../db/retry.js'
import { decidePhase } from '../runs/service.js'
import { answerQuestion } from '../waits/question.js'
import { decideToolCall } from '../waits/tool-approval.js'
import { Run } from '../runs/schemas.js'
import { ToolCallSchema } from '../runs/tool-calls/schemas.js'
import type { TwinAnswer } from './twin.js'

type Args = Record<string, unknown>
type Work = (app: FastifyInstance, request: FastifyRequest, args: Args) => Promise<unknown>

const id = (value: unknown) => String(value).toLowerCase()
const noteOf = (args: Args) => (typeof args.note === 'string' ? args.note : null)
const callerOf = (request: FastifyRequest) => ({ ...request.principal, via: 'mcp' as const })

const WAITS: Record<string, { work: Work; schema: TSchema }> = {
  decide_phase: {
    schema: Run,
    work: (app, request, args) =>
      runTransaction(app.database.db, (trx) =>
        decidePhase({ settings: app.config.runs }, trx, callerOf(request), {
          runId: id(args.runId), phaseRunId: id(args.phaseRunId), decision: args.decision as 'approve' | 'revise' | 'reject', note: noteOf(args), override: args.override === true,
        }),
      ),
  },
  decide_tool_call: {
    schema: ToolCallSchema,
    work: (app, request, args) =>
      runTransaction(app.database.db, (trx) =>
        decideToolCall(app.config.runs, trx, callerOf(request), { runId: id(args.runId), callId: id(args.callId), decision: args.decision as 'approve' | 'deny', note: noteOf(args) }),
      ),
  },
  answer_question: {
    schema: ToolCallSchema,
    work: (app, request, args) =>
      runTransaction(app.database.db, (trx) => answerQuestion(app.config.runs, trx, callerOf(request), { runId: id(args.runId), phaseRunId: id(args.phaseRunId), text: String(args.text) })),
  },
}

export const actsOnWait = (name: string) => name in WAITS

/** The tool's service call: its body, or the problem of its AppError (anything else is thrown: a 500). */
export async function actOnWait(app: FastifyInstance, request: FastifyRequest, name: string, args: Args): Promise<TwinAnswer> {
  const wait = WAITS[name]!
  try {
    const result = await wait.work(app, request, args)
    return { ok: true, status: 200, body: Value.Clean(wait.schema, JSON.parse(JSON.stringify(result))) }
  } catch (error) {
    if (error instanceof AppError) return { ok: false, problem: toProblem(error.kind, error.message, error.errors) }
    if (error instanceof TransactionContended) return { ok: false, problem: contendedProblem() }
    throw error
  }
}
