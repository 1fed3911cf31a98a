// The MCP server's tools: each one its REST twin (twin.ts), with the twin's argument types and bounds, fixed
// annotations, and a sentence in the user's words. `structuredContent` is the body the twin answers; the output
// schema is that body's schema in /openapi.json (output-schemas.ts), named here by the twin's operationId.
import Type, { type TObject, type TSchema } from 'typebox'
import { Uuid } from '../http/schemas.js'
import { INBOX_KINDS } from '../inbox/schemas.js'
import { MAX_ANSWER_LENGTH, MAX_NOTE_LENGTH } from '../runs/limits.js'
import { RunsQuery, StartRunBody } from '../runs/schemas.js'
import { DraftBody, SaveCycleBody } from '../cycles/schemas.js'
import { MAX_TEXT_LENGTH } from '../chat/schemas.js'
import { StringEnum } from '../http/schemas.js'
import { messageContent } from './message-text.js'
import { path, type TwinCall } from './twin.js'

type Args = Record<string, unknown>
type Body = Record<string, unknown> & { data?: Array<Record<string, unknown>> }

export interface ToolSpec {
  name: string
  title: string
  description: string
  /** readOnlyHint, destructiveHint, idempotentHint, openWorldHint */
  hints: [boolean, boolean, boolean, boolean]
  input: TObject
  /** The twin's operationId: its success body's schema is the output schema. */
  operationId: string
  /** The REST call (read_messages: the stream's, then its latest messages; the wait tools: documentation, see waits.ts). */
  twin: (args: Args) => TwinCall
  /** The structuredContent, when it is not the twin's body as it is. */
  shape?: (body: Body, args: Args) => Body
  /** What happened, in the user's words (at most 500 characters). */
  say: (body: Body, args: Args) => string
}

const limit = (max = 100, fallback = 50) => Type.Optional(Type.Integer({ minimum: 1, maximum: max, default: fallback }))
const cursor = Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'the `nextCursor` of the previous page' }))
const idempotencyKey = Type.Optional(Type.String({ pattern: '^[\\x21-\\x7e]{1,255}$', description: '1 to 255 visible ASCII characters: a repeat within 24 hours answers the first result' }))
const note = Type.Optional(Type.String({ minLength: 1, maxLength: MAX_NOTE_LENGTH }))
const input = (properties: Record<string, TSchema>) => Type.Object(properties, { additionalProperties: false })
const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`
const more = (body: Body) => (body.nextCursor ? ' More follow: pass nextCursor as cursor.' : '')
const items = (body: Body) => body.data ?? []

export const TOOLS: ToolSpec[] = [
  {
    name: 'whoami', title: 'Who am I', description: 'Who the API key acts as: the principal, its handle, role and workspace.',
    hints: [true, false, true, false], input: input({}), operationId: 'getMe',
    twin: () => ({ method: 'GET', url: '/api/me' }),
    say: (me) => `You are ${me.handle ? `@${String(me.handle)}` : String(me.principalId)}, ${String(me.role)} of workspace ${String(me.workspaceId)}.`,
  },
  {
    name: 'list_inbox', title: 'List my inbox',
    description: 'What waits for you, soonest deadline first, then oldest: phases awaiting a decision, tool calls awaiting approval and agents\' questions you may act on.',
    hints: [true, false, true, false],
    input: input({ kind: Type.Optional(StringEnum(INBOX_KINDS)), streamId: Type.Optional(Uuid), limit: limit(), cursor }), operationId: 'getInbox',
    twin: (a) => ({ method: 'GET', url: '/api/me/inbox', query: { kind: a.kind as string, streamId: a.streamId as string, limit: a.limit as number, cursor: a.cursor as string } }),
    say: (body) => {
      const list = items(body)
      if (list.length === 0) return 'Nothing waits for you.'
      const first = list[0]!
      return `${count(list.length, 'item')} wait for you; first: ${String(first.kind).replace('_', ' ')} on phase "${String(first.phaseName)}" of ${String(first.triggerName)}.${more(body)}`.slice(0, 500)
    },
  },
  {
    name: 'claim_item', title: 'Claim an inbox item', description: 'Say you are on it: marks the phase\'s current wait as claimed by you for a while. A signal, not a lock.',
    hints: [false, false, true, false], input: input({ runId: Uuid, phaseRunId: Uuid }), operationId: 'claimInboxItem',
    twin: (a) => ({ method: 'POST', url: path`/api/runs/${a.runId}/phases/${a.phaseRunId}/claim` }),
    say: (item) => `You claimed the ${String(item.kind).replace('_', ' ')} on phase "${String(item.phaseName)}".`,
  },
  {
    name: 'release_item', title: 'Release a claim', description: 'Release the claim on a phase\'s current wait (also when there was none).',
    hints: [false, false, true, false], input: input({ runId: Uuid, phaseRunId: Uuid }), operationId: 'releaseInboxItem',
    twin: (a) => ({ method: 'DELETE', url: path`/api/runs/${a.runId}/phases/${a.phaseRunId}/claim` }),
    shape: (_body, a) => ({ runId: String(a.runId).toLowerCase(), phaseRunId: String(a.phaseRunId).toLowerCase(), claimedBy: null }),
    say: () => 'The claim is released.',
  },
  {
    name: 'decide_phase', title: 'Decide a phase',
    description: 'Approve, revise (with a note telling the agent what to change) or reject a phase awaiting your decision. An admin outside the pool may decide with override: true (recorded).',
    hints: [false, true, false, true],
    input: input({ runId: Uuid, phaseRunId: Uuid, decision: StringEnum(['approve', 'revise', 'reject']), note, override: Type.Optional(Type.Boolean()) }), operationId: 'decidePhase',
    twin: (a) => ({ method: 'POST', url: path`/api/runs/${a.runId}/phases/${a.phaseRunId}/decision`, body: { decision: a.decision, ...(a.note !== undefined ? { note: a.note } : {}), ...(a.override !== undefined ? { override: a.override } : {}) } }),
    say: (run, a) => {
      const phase = (run.phases as Array<Record<string, unknown>> | undefined)?.find((p) => p.id === String(a.phaseRunId).toLowerCase())
      const done = { approve: 'approved', revise: 'sent back for changes', reject: 'rejected' }[String(a.decision)]
      return `You ${a.decision === 'revise' ? 'sent' : String(done)} phase "${String(phase?.phaseName ?? '')}"${a.decision === 'revise' ? ' back for changes' : ''}; the phase is now ${String(phase?.status ?? '').replace(/_/g, ' ')} and the run ${String(run.status)}.`
    },
  },
  {
    name: 'decide_tool_call', title: 'Approve or deny a tool call', description: 'Approve (the call is made, once, and the agent goes on) or deny (the agent reads why) a tool call awaiting approval.',
    hints: [false, true, false, true],
    input: input({ runId: Uuid, callId: Uuid, decision: StringEnum(['approve', 'deny']), note }), operationId: 'decideToolCall',
    twin: (a) => ({ method: 'POST', url: path`/api/runs/${a.runId}/tool-calls/${a.callId}/decision`, body: { decision: a.decision, ...(a.note !== undefined ? { note: a.note } : {}) } }),
    say: (call, a) => `You ${a.decision === 'approve' ? 'approved' : 'denied'} the call of ${String(call.name)}; it is now ${String(call.status).replace('_', ' ')}.`,
  },
  {
    name: 'answer_question', title: 'Answer an agent\'s question', description: 'Answer the question an agent asked (tandem.ask_operator); your text is its tool\'s result and the agent goes on.',
    hints: [false, false, false, true], input: input({ runId: Uuid, phaseRunId: Uuid, text: Type.String({ minLength: 1, maxLength: MAX_ANSWER_LENGTH }) }), operationId: 'answerQuestion',
    twin: (a) => ({ method: 'POST', url: path`/api/runs/${a.runId}/phases/${a.phaseRunId}/answer`, body: { text: a.text } }),
    say: () => 'Your answer was sent to the agent; it goes on.',
  },
  {
    name: 'list_streams', title: 'List streams', description: 'The workspace\'s streams (conversations that cycles and runs belong to), oldest first.',
    hints: [true, false, true, false], input: input({ limit: limit(), cursor }), operationId: 'listStreams',
    twin: (a) => ({ method: 'GET', url: '/api/streams', query: { limit: a.limit as number, cursor: a.cursor as string } }),
    say: (body) => `${count(items(body).length, 'stream')}: ${items(body).map((s) => String(s.name)).join(', ')}.${more(body)}`.slice(0, 500),
  },
  {
    name: 'read_messages', title: 'Read a stream\'s messages', description: 'The latest messages of a stream, oldest first.',
    hints: [true, false, true, false], input: input({ streamId: Uuid, limit: limit(50, 20) }), operationId: 'listMessages',
    twin: (a) => ({ method: 'GET', url: path`/api/streams/${a.streamId}` }),
    say: (body) => `The latest ${count(items(body).length, 'message')} of the stream, oldest first.`,
  },
  {
    name: 'post_message', title: 'Post a message',
    description: 'Post a message to a stream (it may fire the stream\'s message triggers). Paragraphs are separated by blank lines; `markdown` (default) reads **bold**, *italic*, ~~strikethrough~~ and `code` only, `plain` reads nothing.',
    hints: [false, false, false, true],
    input: input({ streamId: Uuid, text: Type.String({ minLength: 1, maxLength: MAX_TEXT_LENGTH }), format: Type.Optional(StringEnum(['markdown', 'plain'])), idempotencyKey }), operationId: 'postMessage',
    twin: (a) => ({ method: 'POST', url: path`/api/chat/streams/${a.streamId}/messages`, body: { content: messageContent(String(a.text), a.format === 'plain' ? 'plain' : 'markdown') }, idempotencyKey: a.idempotencyKey as string | undefined }),
    say: () => 'Your message is posted.',
  },
  {
    name: 'list_cycles', title: 'List saved cycles', description: 'The saved cycles (workflows of phases) of a stream, oldest first.',
    hints: [true, false, true, false], input: input({ streamId: Uuid, limit: limit(), cursor }), operationId: 'listCycles',
    twin: (a) => ({ method: 'GET', url: path`/api/cycles/streams/${a.streamId}/cycles`, query: { limit: a.limit as number, cursor: a.cursor as string } }),
    say: (body) => `${count(items(body).length, 'saved cycle')}: ${items(body).map((c) => String(c.triggerName)).join(', ')}.${more(body)}`.slice(0, 500),
  },
  {
    name: 'draft_cycle', title: 'Draft a cycle', description: 'Draft a cycle for a stream from a prompt (generate), or change a current one (refine). Nothing is saved.',
    hints: [true, false, true, false], input: input({ streamId: Uuid, ...DraftBody.properties }), operationId: 'draftCycle',
    twin: ({ streamId, ...body }) => ({ method: 'POST', url: path`/api/cycles/streams/${streamId}/cycles/draft`, body }),
    say: (body) => `A draft of ${count(((body.draft as Body | undefined)?.phasesTemplate as unknown[] | undefined)?.length ?? 0, 'phase')}; save it with save_cycle.`,
  },
  {
    name: 'save_cycle', title: 'Save a cycle', description: 'Save a cycle definition (a trigger name, a description and its phases) to a stream.',
    hints: [false, false, false, false], input: input({ streamId: Uuid, ...SaveCycleBody.properties, idempotencyKey }), operationId: 'saveCycle',
    twin: ({ streamId, idempotencyKey: key, ...body }) => ({ method: 'POST', url: path`/api/cycles/streams/${streamId}/cycles`, body, idempotencyKey: key as string | undefined }),
    say: (cycle) => `Cycle "${String(cycle.triggerName)}" is saved.`,
  },
  {
    name: 'start_run', title: 'Start a run', description: 'Start a run of a saved cycle; its first phase begins at once.',
    hints: [false, false, false, true], input: input({ streamId: Uuid, cycleId: Uuid, ...StartRunBody.properties, idempotencyKey }), operationId: 'startRun',
    twin: (a) => ({ method: 'POST', url: path`/api/cycles/streams/${a.streamId}/cycles/${a.cycleId}/runs`, body: a.input === undefined ? {} : { input: a.input }, idempotencyKey: a.idempotencyKey as string | undefined }),
    say: (run) => `Run ${String(run.id)} of "${String(run.triggerName)}" started; it is ${String(run.status)}.`,
  },
  {
    name: 'list_runs', title: 'List runs', description: 'The runs of a stream, oldest first, optionally of one status.',
    hints: [true, false, true, false], input: input({ streamId: Uuid, status: RunsQuery.properties.status, limit: limit(), cursor }), operationId: 'listRuns',
    twin: (a) => ({ method: 'GET', url: path`/api/cycles/streams/${a.streamId}/runs`, query: { status: a.status as string, limit: a.limit as number, cursor: a.cursor as string } }),
    say: (body) => `${count(items(body).length, 'run')}.${more(body)}`,
  },
  {
    name: 'get_run', title: 'Read a run', description: 'A run: its status and each phase\'s status, output and decisions.',
    hints: [true, false, true, false], input: input({ runId: Uuid }), operationId: 'getRun',
    twin: (a) => ({ method: 'GET', url: path`/api/runs/${a.runId}` }),
    say: (run) => `Run of "${String(run.triggerName)}": ${String(run.status)}; ${(run.phases as Array<Record<string, unknown>>).map((p) => `${String(p.phaseName)} ${String(p.status).replace(/_/g, ' ')}`).join(', ')}.`.slice(0, 500),
  },
  {
    name: 'list_tool_calls', title: 'List a run\'s tool calls', description: 'The tool calls of a run\'s agents, oldest first, with their approvals and answers.',
    hints: [true, false, true, false], input: input({ runId: Uuid, limit: limit(), cursor }), operationId: 'listToolCalls',
    twin: (a) => ({ method: 'GET', url: path`/api/runs/${a.runId}/tool-calls`, query: { limit: a.limit as number, cursor: a.cursor as string } }),
    say: (body) => {
      const waiting = items(body).filter((c) => c.status === 'awaiting_approval').length
      return `${count(items(body).length, 'tool call')}${waiting ? `, ${waiting} awaiting approval` : ''}.${more(body)}`
    },
  },
]

export const TOOL_BY_NAME = new Map(TOOLS.map((tool) => [tool.name, tool]))
