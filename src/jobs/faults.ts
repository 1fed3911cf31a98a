// Fault injection for the failover tests: TANDEM_TEST_FAULT=job:<name>:start kills the process (SIGKILL) when a
// job of that name begins (locked, nothing of it done yet: for a delivery, between the job's lock and the
// task's lease), job:<name>:end when its handler has returned (its effect committed, the job not yet marked
// done). With TANDEM_TEST_FAULT_ONCE=<file>, only the process that creates the file dies, so several instances
// may carry the fault and exactly one of them trips it. Never set in production.
import { openSync, closeSync } from 'node:fs'

const FAULT = process.env.TANDEM_TEST_FAULT
const ONCE = process.env.TANDEM_TEST_FAULT_ONCE

function trip(): void {
  if (ONCE) {
    try {
      closeSync(openSync(ONCE, 'wx'))
    } catch {
      return // another instance tripped it
    }
  }
  process.kill(process.pid, 'SIGKILL')
}

/** Kills the process here if the fault names this job and point. */
export function jobFault(name: string, point: 'start' | 'end'): void {
  if (FAULT !== undefined && FAULT === `job:${name}:${point}`) trip()
}
