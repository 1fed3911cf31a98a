// Every bound of the run engine — src/runs/ and its wings (machine/, tasks/, tool-calls/, adapters/) — in one place
// (docs/runs-and-events.md "Events"): what grows with use, and what a caller or an agent may send, has its limit
// here (docs/architecture-engine.md "Limits" names those tested at the limit and one past it). Not here: a tool
// call's, in src/tools/limits.ts; the bytes of one event, MAX_EVENT_BYTES, in src/events/store.ts (64 KiB, for
// every event type); other features' (cycles, chat, agents, …), in their own schemas.ts.

// Runs and their phases.
/** Attempts of one phase (its first and every revise); a revise past this is a 422 too-many-attempts. */
export const MAX_ATTEMPTS_PER_PHASE = 50
/** Characters of a decision's note (400 with a pointer past it). */
export const MAX_NOTE_LENGTH = 4000
/** Bytes of a run's `input` as JSON (400 with a pointer past it). */
export const MAX_INPUT_BYTES = 64 * 1024
/** Characters of a phase output's preview in a run's summary. */
export const OUTPUT_PREVIEW_LENGTH = 500
/** Runs one trigger call may start; more matching cycles start none (409 too-many-runs). */
export const MAX_RUNS_PER_TRIGGER = 20
/** Characters of a trigger name in the path that fires it (a longer path is a 414 first). */
export const MAX_TRIGGER_NAME_LENGTH = 100

// Tasks: what an agent answers, and how long a request may wait for a task or a call.
/** Characters of an answer's `text` (and of one streamed delta). */
export const MAX_OUTPUT_TEXT_LENGTH = 40000
/** Characters of an answer's `error.detail`. */
export const MAX_DETAIL_LENGTH = 4000
/** Each token count a vendor reports (a larger one is dropped with the rest of the report). */
export const MAX_TOKEN_COUNT = Number.MAX_SAFE_INTEGER
/** Seconds a claim, or a read of a task's tool call, may wait (`waitSeconds`). */
export const MAX_WAIT_SECONDS = 30
/** Credential secrets kept opened for deliveries (the oldest go first). */
export const MAX_OPENED_SECRETS = 256

// Adapters.
/** Bytes of a webhook agent's synchronous answer. */
export const MAX_WEBHOOK_ANSWER_BYTES = 1024 * 1024
/** Webhook signing keys kept made (the oldest go first). */
export const MAX_SIGNING_KEYS = 256
/** Bytes of one streamed Mistral answer. */
export const MAX_MISTRAL_STREAM_BYTES = 4 * 1024 * 1024

// Tool calls and the waits on them.
/** Characters of a call's `output` in the list and in events; the model receives the whole (src/tools/limits.ts). */
export const LISTED_OUTPUT_CHARS = 4000
/** Characters of a tool's name in the task tool route's path. */
export const MAX_TOOL_NAME_IN_PATH = 200
/** Characters of an operator's answer to an agent's question. */
export const MAX_ANSWER_LENGTH = 20000
