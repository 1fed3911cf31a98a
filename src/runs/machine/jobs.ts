// The run engine's job definitions: names, payloads and keys (the handlers are in handlers.ts).
import type { Sealed } from '../../credentials/vault.js'

declare module '../../jobs/registry.js' {
  interface JobPayloads {
    'runs.start': { runId: string }
    'runs.deliver': DeliveryJob
    'runs.task-timeout': { taskId: string }
  }
}

export const START_JOB = 'runs.start'
export const DELIVER_TASK_JOB = 'runs.deliver'
export const TIMEOUT_JOB = 'runs.task-timeout'

/** The delivery job of a task: one at a time (a retry or a poll replaces it). */
export const deliveryKey = (taskId: string) => `deliver:${taskId}`
/** The time-out job of a task, removed when the task settles. */
export const timeoutKey = (taskId: string) => `timeout:${taskId}`

/**
 * What a delivery job carries. The task's token is stored hashed in run_tasks; the job holds what makes it again
 * at each delivery, never the token in plaintext: the id of the vault key it is derived with (Vault.taskToken),
 * or, for a job enqueued before tokens were derived, the token sealed by the vault (or, before tokens were
 * sealed, the token itself).
 */
export interface DeliveryJob {
  taskId: string
  token: { derivedWith: string } | Sealed | string
  /** 1 for the first delivery; retries count up to TANDEM_DISPATCH_ATTEMPTS. */
  dispatch: number
  /** Set for a scheduled look at a vendor (an adapter's `poll` outcome). */
  poll?: Record<string, unknown>
}
