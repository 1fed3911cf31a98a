// Shared pieces of the operators' resources: a trigger name, a run's input, and the 400 of a bad field.
import Type from 'typebox'
import { AppError, type FieldError } from '../http/problem.js'

export const TriggerName = Type.String({ minLength: 1, maxLength: 100, description: 'the stream trigger to fire (compared case-insensitively with saved cycles\' triggerName)' })
export const RunInput = Type.Object({}, { additionalProperties: true, description: 'the input of the runs it starts: any JSON object, at most 64 KiB' })

/** A run's `input` is at most this many bytes of JSON (RUNS.md). */
export const MAX_INPUT_BYTES = 64 * 1024

export function inputTooLarge(input: unknown, pointer: string): FieldError | null {
  const bytes = Buffer.byteLength(JSON.stringify(input))
  return bytes > MAX_INPUT_BYTES ? { pointer, detail: `is ${bytes} bytes of JSON; at most ${MAX_INPUT_BYTES}` } : null
}

export function invalid(errors: FieldError[], where = 'body'): AppError {
  return new AppError('validation-error', `The ${where} has ${errors.length} problem${errors.length === 1 ? '' : 's'}; see errors.`, errors)
}
