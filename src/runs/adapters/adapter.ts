// The adapter interface: how a task reaches an agent of one providerType. Each adapter is one file in this
// folder; the run engine (src/runs) owns state, retries, polling schedules and time-outs, and the adapter only
// speaks its vendor's protocol and says what happened.
import type { Content } from '../../chat/schemas.js'

export type JsonObject = { [key: string]: unknown }

/** The task payload of docs/runs-and-events.md ("Tasks: how a phase reaches its agent"), the same for every adapter. */
export interface TaskPayload {
  task: { id: string; attempt: number }
  run: { id: string; input: JsonObject }
  stream: { id: string; name: string }
  cycle: { id: string; triggerName: string; description: string | null }
  phase: { id: string; index: number; phaseName: string; goal: string; instructions: string; feedback: string | null }
  agent: { id: string; name: string; instructions: string | null; config: JsonObject }
  previous: Array<{ phaseName: string; text: string }>
  messages: Array<{ id: string; authorId: string; authorType: 'principal' | 'agent'; text: string; createdAt: string }>
  result: { url: string; token: string }
  /** custom_webhook and custom_token_only agents with tools: what they may call, and where (docs/tools-and-approvals.md). */
  tools?: Array<{ name: string; description: string; inputSchema: Record<string, unknown> }>
  toolsUrl?: string
}

/** What an adapter knows of the agent besides the payload: where and how to call it. */
export interface AgentTarget {
  id: string
  name: string
  providerType: string
  authMode: 'api_key' | 'direct_line' | 'none' | null
  /** null: the vendor's public base (see docs/runs-and-events.md); set: replaces it. */
  endpointUrl: string | null
  config: JsonObject
  instructions: string | null
  /**
   * The decrypted credential secret, or null when the agent names none. Never logged, never in a problem. An
   * adapter behind the registry sees an effective authMode (never null) and no secret when it is `none`.
   */
  secret: string | null
}

/** Everything outgoing goes through these: they apply the egress guard and the dispatch time-out. */
export interface AdapterContext {
  /** fetch through the egress guard (redirects are never followed: `redirect: 'manual'` is forced). */
  fetch: typeof fetch
  /** undici's request through the egress guard (redirects are never followed): the webhook agent's hot path. */
  request: import('../../net/egress.js').EgressGuard['request']
  /** A dns.lookup-compatible function that refuses non-public addresses (for `ws` or node:http clients). */
  lookup: import('node:net').LookupFunction
  /** Aborted when TANDEM_DISPATCH_TIMEOUT_MS passes. */
  signal: AbortSignal
  timeoutMs: number
  /** W3C trace context to send as `traceparent`: a new span in the trace of the request that started the run. */
  traceparent?: string
  /**
   * Set when the agent streams (`capabilities.streaming: true`): the adapter hands each piece of the answer here
   * as the vendor writes it (docs/streaming-and-usage.md). It never throws and never waits; the engine creates
   * the message at the first delta, resets it on a retried delivery, and still takes the whole `output` of the
   * outcome as the answer.
   */
  onDelta?: (text: string) => void
  /**
   * Set when the agent has tools and its adapter runs Tandem's model tool loop (claude, mistral chat): the tools,
   * and where the loop records its calls and waits (src/runs/tool-calls/host.ts; docs/tools-and-approvals.md).
   */
  tools?: import('./tool-loop.js').ToolLoopHost
  /**
   * Set when traces are on: told of each model call of Tandem's own loop (claude, mistral chat) as it ends, for
   * its `chat` span (docs/insights.md). It never throws and never waits.
   */
  onModelStep?: (step: ModelStep) => void
  /** Set for an ElevenLabs agent with tools: answers its client_tool_call events (src/runs/tool-calls/client.ts). */
  clientTools?: ClientTools
  /** Where a task sent to a remote A2A agent is recorded before it leaves (src/a2a/remote-ledger.ts). */
  a2aLedger?: import('../../a2a/remote-ledger.js').RemoteTaskLedger
  /** Where a remote A2A agent's request for input becomes the phase's question (src/a2a/remote-waits.ts). */
  a2aWaits?: import('../../a2a/remote-waits.js').RemoteWaits
}

/** Tools an agent calls during its conversation (ElevenLabs client tools): each call recorded and made, never thrown. */
export interface ClientTools {
  call(name: string, parameters: unknown, signal: AbortSignal): Promise<{ ok: boolean; text: string }>
}

/** Tokens the vendor reported for one attempt (summed over a tool loop's steps). */
/** One model call of Tandem's loop: its model, when it ran (ms since the epoch), its tokens and how it ended. */
export interface ModelStep {
  model: string
  start: number
  end: number
  usage: Usage | null
  finishReason: string | null
  /** The failure's class (the outcome's problem code, or `retry`), null when it answered. */
  error: string | null
}

export interface Usage {
  inputTokens: number
  outputTokens: number
}

export type AgentOutput = { text: string } | { content: Content }

export type ProblemCode = 'agent-failed' | 'agent-rejected' | 'agent-unavailable' | 'agent-misconfigured' | 'agent-unreachable' | 'agent-timeout' | 'egress-denied'

export type DeliveryOutcome =
  /** The answer is here: the engine posts it and advances the phase. */
  | { kind: 'answered'; output: AgentOutput; usage?: { inputTokens: number; outputTokens: number } | null }
  /** The agent took the task and will POST to result.url (custom_webhook 202, custom_token_only). */
  | { kind: 'accepted' }
  /** The vendor works on it: the engine calls `poll(state)` from a scheduled job after `afterMs` (default TANDEM_POLL_INTERVAL_MS). */
  | { kind: 'poll'; state: JsonObject; afterMs?: number }
  /** Transient (network error, time-out, 408, 429, 5xx): the engine retries with back-off, then fails with agent-unreachable. */
  | { kind: 'retry'; detail: string; retryAfterMs?: number }
  /** Final: the phase fails with this problem. `detail` says why and never contains the secret. */
  | { kind: 'failed'; code: ProblemCode; detail: string }
  /** The model's tool loop waits for an operator (an approval, an answer); the phase waits, and the loop resumes in a new delivery. */
  | { kind: 'waiting' }

export interface Adapter {
  readonly providerType: string
  /**
   * `push` (default): the engine calls `deliver` from a delivery job. `claim`: nothing is sent; an agent key
   * claims the task (POST /api/tasks/claim) and answers at result.url. (Added by the run engine.)
   */
  readonly delivery?: 'push' | 'claim'
  /** Why this agent cannot be called at all (→ agent-unavailable at once), or null. E.g. "config.model is not set". */
  unavailable(agent: AgentTarget): string | null
  deliver(payload: TaskPayload, agent: AgentTarget, context: AdapterContext): Promise<DeliveryOutcome>
  /** For adapters that answer `poll`: one look at the vendor, from a scheduled job. */
  poll?(state: JsonObject, payload: TaskPayload, agent: AgentTarget, context: AdapterContext): Promise<DeliveryOutcome>
}
