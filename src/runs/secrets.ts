// The one call into the credential vault: the decrypted secret an agent names, or null when it does not exist.
export { readSecret as readAgentSecret } from '../credentials/store.js'
