// The webhooks and webhook_deliveries tables as Kysely sees them (owned by src/events/webhooks/store.ts; types only).

export interface WebhookTable {
  id: string
  workspace_id: string
  url: string
  events: string
  stream_id: string | null
  description: string | null
  enabled: number
  disabled_reason: string | null
  consecutive_failures: number
  secret_key_id: string
  secret_ciphertext: string
  created_at: string
  updated_at: string
}

export interface WebhookDeliveryTable {
  id: string
  webhook_id: string
  workspace_id: string
  stream_id: string
  event_id: number
  type: string
  payload: string
  status: 'pending' | 'succeeded' | 'failed'
  attempts: number
  last_status: number | null
  last_error: string | null
  next_attempt_at: string | null
  /** When the latest attempt began (finding attempts whose worker died). */
  attempt_started_at: string | null
  /** The delivery's own span in the trace of the change that caused the event; null when none is known. */
  traceparent: string | null
  created_at: string
  updated_at: string
}
