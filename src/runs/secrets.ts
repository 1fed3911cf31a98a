// The call into the credential vault for a delivery: the secret of the credential an agent names, decrypted.
import { openWithRing } from '../credentials/vault.js'

/** The secret of a credential row read with the delivery's other reads (store.ts findDeliveryContext), decrypted. */
export function openAgentSecret(credential: { id: string; keyId: string; ciphertext: string }): string {
  return openWithRing({ keyId: credential.keyId, ciphertext: credential.ciphertext }, credential.id)
}
