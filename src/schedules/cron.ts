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

/** Two ticks of one schedule are at least this many seconds apart (every two seconds is the most often a schedule fires). */
export const MIN_TICK_SECONDS = 2

/**
 * The seconds of a minute a six-field cron fires at (five fields: [0]). Read from the seconds field alone, which
 * croner applies the same way in every minute that matches.
 */
function secondsOf(fields: string[]): number[] {
  if (fields.length === 5) return [0]
  const start = new Date(Date.UTC(2000, 0, 1, 0, 0, 0))
  const ticks = new Cron(`${fields[0]} * * * * *`, { timezone: 'UTC', paused: true }).nextRuns(60, new Date(start.getTime() - 1))
  return ticks.filter((tick) => tick.getTime() - start.getTime() < 60000).map((tick) => tick.getUTCSeconds())
}

/**
 * Two ticks closer than MIN_TICK_SECONDS: two seconds of the field less than that apart, or the last second of one
 * minute and the first of the next (59 and 0, when the minute after a matching one can match too; refused always,
 * the simple rule).
 */
function tooOften(fields: string[]): boolean {
  const seconds = secondsOf(fields)
  for (let i = 1; i < seconds.length; i++) if ((seconds[i] as number) - (seconds[i - 1] as number) < MIN_TICK_SECONDS) return true
  return seconds.length > 1 && (seconds[0] as number) + 60 - (seconds[seconds.length - 1] as number) < MIN_TICK_SECONDS
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
  if (tooOften(fields)) return { pointer: '/cron', detail: `fires more often than once every ${MIN_TICK_SECONDS} seconds; two ticks of a schedule are at least ${MIN_TICK_SECONDS} s apart (e.g. */${MIN_TICK_SECONDS} * * * * *)` }
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
