// The run engine's job definitions: names, payloads and keys (the handlers are in handlers.ts).
import type { Sealed } from '../credentials/vault.js'

export const START_JOB = 'runs.start'
export const DELIVER_TASK_JOB = 'runs.deliver'
export const TIMEOUT_JOB = 'runs.task-timeout'

/** The delivery job of a task: one at a time (a retry or a poll replaces it). */
export const deliveryKey = (taskId: string) => `deliver:${taskId}`
/** The time-out job of a task, removed when the task settles. */
export const timeoutKey = (taskId: string) => `timeout:${taskId}`

/**
 * What a delivery job carries. The task's token lives here, sealed by the vault (and as a hash in run_tasks),
 * until the job is done: the job row never holds it in plaintext. (A plain string: a job enqueued before tokens
 * were sealed.)
 */
export interface DeliveryJob {
  taskId: string
  token: Sealed | string
  /** 1 for the first delivery; retries count up to TANDEM_DISPATCH_ATTEMPTS. */
  dispatch: number
  /** Set for a scheduled look at a vendor (an adapter's `poll` outcome). */
  poll?: Record<string, unknown>
}
