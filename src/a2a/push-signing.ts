// The Standard Webhooks signer of a push config's secret, by the rule of Tandem's run webhooks: `whsec_<base64>` is
// a Standard Webhooks key, any other secret signs with its UTF-8 bytes (a raw key).
import { Webhook } from 'standardwebhooks'

/** The signer of `secret`, or null when it starts with `whsec_` but is not one (bad base64, or empty). */
export function signerOf(secret: string): Webhook | null {
  try {
    return secret.startsWith('whsec_') ? new Webhook(secret) : new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' })
  } catch {
    return null
  }
}
