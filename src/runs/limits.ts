// Every bound of the run engine, in one place (docs/runs-and-events.md "Events"): what grows with use has a limit here, and a
// test at the limit and one past it.

/** Attempts of one phase (its first and every revise); a revise past this is a 422 too-many-attempts. */
export const MAX_ATTEMPTS_PER_PHASE = 50
/** Characters of a decision's note (400 with a pointer past it). */
export const MAX_NOTE_LENGTH = 4000
/** Bytes of a run's `input` as JSON (400 with a pointer past it). */
export const MAX_INPUT_BYTES = 64 * 1024
// Bytes of one event: MAX_EVENT_BYTES in src/events/store.ts (64 KiB), for every event type.
/** Characters of a phase output's preview in a run's summary. */
export const OUTPUT_PREVIEW_LENGTH = 500
/** Runs one trigger call may start; more matching cycles start none (409 too-many-runs). */
export const MAX_RUNS_PER_TRIGGER = 20
