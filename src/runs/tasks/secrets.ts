// The call into the credential vault for a delivery: the secret of the credential an agent names, decrypted.
import { openWithRing } from '../../credentials/vault.js'
import { keptOrMade } from '../../kept.js'
import { MAX_OPENED_SECRETS } from '../limits.js'

// Secrets opened for deliveries, by their sealed form: every delivery of an agent opens the same ciphertext, and
// AES-GCM's set-up costs more than the rest of reading it. A ciphertext is never re-sealed in place (a new seal has a
// new random IV; rekey writes new ciphertexts), so an entry can only be stale by not being asked for any more: the
// oldest go first. The plaintexts stay in this process's memory, as the vault's keys do.
const opened = new Map<string, string>()

/** The secret of a credential row read with the delivery's other reads (store.ts findDeliveryContext), decrypted. */
export function openAgentSecret(credential: { id: string; keyId: string; ciphertext: string }): string {
  const sealedAs = `${credential.id}\0${credential.keyId}\0${credential.ciphertext}`
  return keptOrMade(opened, sealedAs, MAX_OPENED_SECRETS, () => openWithRing({ keyId: credential.keyId, ciphertext: credential.ciphertext }, credential.id))
}
