// The webhook agent's delivery signature is computed with node:crypto's HMAC (signatureOf), not the standardwebhooks
// library's JavaScript SHA-256; it must be the header the library itself makes and verifies, for every kind of
// secret the library takes: `whsec_…` (base64 after the prefix) and raw (each UTF-16 code unit a byte, as the
// library reads it), whatever characters the payload holds.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes, randomInt } from 'node:crypto'
import { signatureOf, signer } from '../../../src/runs/adapters/custom-webhook.js'

const someText = (length: number) => Array.from({ length }, () => String.fromCharCode(randomInt(0, 0xffff))).join('')

describe('delivery signature', () => {
  it('is the header standardwebhooks makes, and verifies, for whsec_ and raw secrets and any body', () => {
    for (let i = 0; i < 500; i++) {
      const secret = i % 2 === 0 ? `whsec_${randomBytes(randomInt(16, 64)).toString('base64')}` : someText(randomInt(8, 48))
      const id = `msg_${i}`
      const timestamp = new Date(Date.now() - randomInt(0, 3_600_000))
      const body = i % 3 === 0 ? JSON.stringify({ text: someText(randomInt(0, 400)) }) : JSON.stringify({ task: { id }, n: i, emoji: '😀\ud800' })
      const header = signatureOf(secret, id, timestamp, body)
      assert.equal(header, signer(secret).sign(id, timestamp, body), `secret #${i}`)
      if (i % 2 === 0) {
        const headers = { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': '' }
        headers['webhook-signature'] = signatureOf(secret, id, new Date(Number(headers['webhook-timestamp']) * 1000), body)
        assert.doesNotThrow(() => signer(secret).verify(body, headers))
      }
    }
  })

  it('a secret the library refuses is refused the same way', () => {
    assert.throws(() => signer('whsec_***'))
    assert.throws(() => signatureOf('whsec_***', 'msg', new Date(), '{}'))
  })
})
