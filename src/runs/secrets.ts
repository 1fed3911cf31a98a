// The calls into the credential vault: the decrypted secret an agent names, or null when it does not exist.
export { readSecret as readAgentSecret } from '../credentials/store.js'

import { openWithRing } from '../credentials/vault.js'

/** The secret of a credential row read with the delivery's other reads (store.ts findDeliveryContext), decrypted. */
export function openAgentSecret(credential: { id: string; keyId: string; ciphertext: string }): string {
  return openWithRing({ keyId: credential.keyId, ciphertext: credential.ciphertext }, credential.id)
}
