// A request kept to recognise a retry may hold a secret (POST /api/credentials): its fingerprint is keyed, so the
// stored row cannot be matched against guessed secrets offline, yet a retry with the same body is still a replay.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'

for (const dialect of dialects()) {
  describe(`idempotency fingerprints (${dialect})`, () => {
    let app: FastifyInstance
    before(async () => {
      app = await build(dialect)
    })
    after(() => app.close())

    it('stores a keyed fingerprint, not a plain hash of a body holding a secret', async () => {
      const body = { name: 'payments', secret: 'sk_live_guessable' }
      const first = await send(app, 'POST', '/api/credentials', body, { 'idempotency-key': 'cred-1' })
      assert.equal(first.statusCode, 201)
      const replay = await send(app, 'POST', '/api/credentials', body, { 'idempotency-key': 'cred-1' })
      assert.equal(replay.headers['idempotent-replayed'], 'true')
      assert.equal(replay.body, first.body)
      const rows = await app.database.db.selectFrom('idempotency_requests').select('request_hash').execute()
      assert.equal(rows.length, 1)
      const plain = createHash('sha256').update(`POST /api/credentials\n${JSON.stringify(body)}`).digest('hex')
      assert.notEqual(rows[0]?.request_hash, plain)
      assert.match(String(rows[0]?.request_hash), /^[0-9a-f]{64}$/)
      const other = await send(app, 'POST', '/api/credentials', { ...body, secret: 'sk_live_other' }, { 'idempotency-key': 'cred-1' })
      assert.equal(other.statusCode, 422)
    })
  })
}
