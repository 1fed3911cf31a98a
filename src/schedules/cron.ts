// Cron expressions of schedules, read by croner: five fields, or six with seconds first, in an IANA time zone.
import { Cron } from 'croner'

export type CronCheck = { ok: true } | { pointer: '/cron' | '/timezone'; detail: string }

function cronOf(expression: string, timezone: string): Cron {
  return new Cron(expression, { timezone, mode: '5-or-6-parts', paused: true })
}

/** The time zone's canonical IANA name, or null when there is no such zone. */
export function canonicalTimezone(name: string): string | null {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone
  } catch {
    return null
  }
}

/** Why `expression` is not a schedule (a pointer and words for the 400), or ok. */
export function checkCron(expression: string, timezone: string): CronCheck {
  const fields = expression.trim().split(/\s+/)
  if (fields.length !== 5 && fields.length !== 6) {
    return { pointer: '/cron', detail: `must have five fields (minute hour day-of-month month day-of-week), or six with seconds first; got ${fields.length}` }
  }
  let cron: Cron
  try {
    cron = cronOf(expression, timezone)
  } catch (error) {
    return { pointer: '/cron', detail: `is not a cron expression: ${(error as Error).message.replace(/^CronPattern: /, '')}` }
  }
  if (cron.nextRun() === null) return { pointer: '/cron', detail: 'never fires (no date matches it)' }
  return { ok: true }
}

/** The first tick strictly after `after`; null when there is none. */
export function nextTick(expression: string, timezone: string, after: Date): Date | null {
  return cronOf(expression, timezone).nextRun(after)
}

/** The latest tick at or before `at` (the one a catch-up fires); null when there is none. */
export function latestTick(expression: string, timezone: string, at: Date): Date | null {
  const cron = cronOf(expression, timezone)
  // previousRuns looks strictly before its reference: a tick exactly at `at` counts too.
  const [previous] = cron.previousRuns(1, new Date(at.getTime() + 1))
  return previous ?? null
}
