// Small pieces every view uses: problem messages, field errors tied to their fields, list loading.
import { useId, type ReactNode } from 'react'
import { ApiError } from './api/client'

/** A clear sentence for an error from the API (403/404/409/412/… or the network). */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) {
    const detail = error.problem.detail ?? error.problem.title ?? ''
    switch (error.status) {
      case 401: return 'You are not signed in, or your key is no longer valid.'
      case 403: return `Not allowed: ${detail}`
      case 404: return `Not found: ${detail}`
      case 409: return `Conflict: ${detail}`
      default: return detail || `The server answered ${error.status}.`
    }
  }
  return error instanceof Error ? `Could not reach Tandem: ${error.message}` : String(error)
}

export function ErrorMessage({ error }: { error: unknown }) {
  if (!error) return null
  return <p role="alert" className="error">{describeError(error)}</p>
}

/** Props for an input named by `pointer`, and the error text beside it (aria-describedby ties the two). */
export function useField(error: unknown, pointer: string) {
  const id = useId()
  const message = error instanceof ApiError ? error.fieldError(pointer) : undefined
  return {
    input: { id, 'aria-invalid': message ? true : undefined, 'aria-describedby': message ? `${id}-error` : undefined },
    describedBy: message ? `${id}-error` : undefined,
    message: message ? <span id={`${id}-error`} className="field-error">{message}</span> : null,
  }
}

export function Field({ label, field, children }: { label: string; field: ReturnType<typeof useField>; children: ReactNode }) {
  return (
    <div className="field">
      <label htmlFor={field.input.id}>{label}</label>
      {children}
      {field.message}
    </div>
  )
}

export function Loading() {
  return <p aria-live="polite">Loading…</p>
}

export function shortId(id: string) {
  return id.slice(-8)
}
