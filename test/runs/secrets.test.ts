// The secret of an agent's credential, opened for a delivery (openAgentSecret, src/runs/tasks/secrets.ts): each sealed
// form is decrypted once and then answered from memory, by its whole sealed form (credential id, key id and
// ciphertext), so a new seal, another credential or an altered ciphertext is never answered with a secret that
// was opened for something else. Real seals of a real vault; node:crypto's createDecipheriv is counted to see
// which opens decrypt.
import { afterEach, beforeEach, describe, it, mock } from 'node:test'
import assert from 'node:assert/strict'
import crypto, { randomBytes } from 'node:crypto'
import { syncBuiltinESMExports } from 'node:module'
import { Vault, VaultError, keyIdOf } from '../../src/credentials/vault.js'
import { newId } from '../../src/ids.js'
import { openAgentSecret } from '../../src/runs/tasks/secrets.js'

const vault = new Vault(randomBytes(32))

/** A credential row as the delivery reads it: a new id each time, so that no test sees another's opened secrets. */
function sealedCredential(secret: string, id = newId()) {
  return { id, ...vault.seal(secret, id) }
}

/** The same ciphertext with one byte of its encrypted body changed (after the 12-byte IV and the 16-byte tag). */
function altered(ciphertext: string): string {
  const data = Buffer.from(ciphertext, 'base64')
  data[28 + 1] = (data[28 + 1] as number) ^ 0x01
  return data.toString('base64')
}

describe('openAgentSecret', () => {
  let decryptions: () => number
  beforeEach(() => {
    // vault.ts imports createDecipheriv by name: syncBuiltinESMExports makes that import see the counting one.
    const spy = mock.method(crypto, 'createDecipheriv')
    syncBuiltinESMExports()
    decryptions = () => spy.mock.callCount()
  })
  afterEach(() => {
    mock.restoreAll()
    syncBuiltinESMExports()
  })

  it('opens a sealed credential once: asked again, it gives the same secret without decrypting', () => {
    const credential = sealedCredential('sk-agent-one')
    assert.equal(openAgentSecret(credential), 'sk-agent-one')
    assert.equal(decryptions(), 1)
    assert.equal(openAgentSecret({ ...credential }), 'sk-agent-one')
    assert.equal(openAgentSecret(credential), 'sk-agent-one')
    assert.equal(decryptions(), 1, 'the second and third opens were answered from memory')
  })

  it('two seals give each its own secret: two credentials, and one credential whose secret was replaced', () => {
    const first = sealedCredential('sk-first')
    const second = sealedCredential('sk-second')
    assert.equal(openAgentSecret(first), 'sk-first')
    assert.equal(openAgentSecret(second), 'sk-second')
    // The first credential's secret replaced: a new seal for the same id, and each sealed form gives its own.
    const replaced = sealedCredential('sk-first-rotated', first.id)
    assert.equal(openAgentSecret(replaced), 'sk-first-rotated')
    assert.equal(openAgentSecret(first), 'sk-first')
    assert.equal(openAgentSecret(second), 'sk-second')
    assert.equal(decryptions(), 3, 'each sealed form was decrypted once')
  })

  it('a sealed credential that is not what was opened still fails with the vault\'s error, however often it was opened', () => {
    const credential = sealedCredential('sk-genuine')
    assert.equal(openAgentSecret(credential), 'sk-genuine')
    assert.equal(openAgentSecret(credential), 'sk-genuine')
    // Its ciphertext altered: it does not authenticate.
    assert.throws(() => openAgentSecret({ ...credential, ciphertext: altered(credential.ciphertext) }), VaultError)
    // The same ciphertext on another credential row (the id is the seal's associated data): it does not authenticate.
    assert.throws(() => openAgentSecret({ ...credential, id: newId() }), VaultError)
    // The same ciphertext said to be sealed with a key this process does not have.
    assert.throws(() => openAgentSecret({ ...credential, keyId: keyIdOf(randomBytes(32)) }), /does not have/)
    // And a failure is not remembered either: asked again, it fails again.
    assert.throws(() => openAgentSecret({ ...credential, ciphertext: altered(credential.ciphertext) }), VaultError)
    assert.equal(openAgentSecret(credential), 'sk-genuine')
  })

  it('keeps at most 256 opened secrets: the oldest is decrypted again once 256 others were opened after it', () => {
    const oldest = sealedCredential('sk-oldest')
    assert.equal(openAgentSecret(oldest), 'sk-oldest')
    const others = Array.from({ length: 256 }, (_, i) => sealedCredential(`sk-other-${i}`))
    for (const [i, other] of others.entries()) assert.equal(openAgentSecret(other), `sk-other-${i}`)
    const before = decryptions()
    assert.equal(openAgentSecret(others.at(-1)!), 'sk-other-255')
    assert.equal(decryptions(), before, 'the newest is still held')
    assert.equal(openAgentSecret(oldest), 'sk-oldest')
    assert.equal(decryptions(), before + 1, 'the oldest was let go, and is opened again')
  })
})
