// Shared pieces of the operators' resources: a trigger name, a run's input, and the 400 of a bad field.
import Type from 'typebox'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { AppError, type FieldError } from '../http/problem.js'

export const TriggerName = Type.String({ minLength: 1, maxLength: 100, description: 'the stream trigger to fire (compared case-insensitively with saved cycles\' triggerName)' })
export const RunInput = Type.Object({}, { additionalProperties: true, description: 'the input of the runs it starts: any JSON object, at most 64 KiB' })

/** A run's `input` is at most this many bytes of JSON (docs/runs-and-events.md). */
export const MAX_INPUT_BYTES = 64 * 1024

export function inputTooLarge(input: unknown, pointer: string): FieldError | null {
  const bytes = Buffer.byteLength(JSON.stringify(input))
  return bytes > MAX_INPUT_BYTES ? { pointer, detail: `is ${bytes} bytes of JSON; at most ${MAX_INPUT_BYTES}` } : null
}

export function invalid(errors: FieldError[], where = 'body'): AppError {
  return new AppError('validation-error', `The ${where} has ${errors.length} problem${errors.length === 1 ? '' : 's'}; see errors.`, errors)
}

/**
 * A stream holds at most this many schedules, and as many message triggers and inbound hooks: every new
 * message is matched against all its message triggers in the transaction that posts it, and the lists of
 * triggers and hooks come in one page.
 */
export const MAX_PER_STREAM = 100

/** 422 when the stream already holds MAX_PER_STREAM of `table`'s rows (checked in the creating transaction). */
export async function requireRoomOnStream(db: Kysely<Database>, table: 'schedules' | 'message_triggers' | 'inbound_hooks', streamId: string, noun: string): Promise<void> {
  const { count } = await db.selectFrom(table).select((eb) => eb.fn.countAll<string | number>().as('count')).where('stream_id', '=', streamId).executeTakeFirstOrThrow()
  if (Number(count) >= MAX_PER_STREAM) throw new AppError('unprocessable', `A stream has at most ${MAX_PER_STREAM} ${noun}; delete one before adding another.`)
}
