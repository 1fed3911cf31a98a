// Problems speak the user's words: no section numbers of the contract, counts in the right number, types as
// words. The fuzz suite checks every answer it gets with the same rules (test/wording.ts); these are the
// answers a newcomer meets first, checked word for word, and the API docs a running server shows.
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { problemWordingFaults, wordingFaults } from '../wording.js'

describe('the wording rules', () => {
  it('catch section numbers, wrong plurals and statuses said as codes, and let good English through', () => {
    assert.equal(wordingFaults('must be a UUID (spec 2.1: versions 1 to 8)').length, 1)
    assert.equal(wordingFaults('see § 4').length, 1)
    assert.equal(wordingFaults('must be at least 1 characters long').length, 1)
    assert.equal(wordingFaults('must have at most 2 item').length, 1)
    assert.equal(wordingFaults('Phase "Reply" is succeeded, not awaiting a decision.').length, 1)
    assert.equal(wordingFaults('Phase "Reply" is awaiting_tool_approval: its tool calls take no decision.').length, 1)
    assert.deepEqual(wordingFaults('must be at least 1 character long; 1 to 255 visible ASCII characters; at most 120 characters; 1.5 seconds'), [])
    assert.deepEqual(wordingFaults('Phase "Reply" has succeeded: it takes no decision. The run is running; the phase is awaiting a decision.'), [])
  })
})

for (const dialect of dialects()) {
  describe(`problem texts in the user's words (${dialect})`, () => {
    let app: FastifyInstance
    before(async () => {
      app = await build(dialect)
    })
    after(() => app.close())

    const errorsOf = async (method: 'POST' | 'GET', url: string, body?: unknown) => {
      const res = await send(app, method, url, body)
      assert.equal(res.statusCode, 400, res.body)
      assert.deepEqual(problemWordingFaults(res.json()), [])
      return res.json().errors as Array<{ pointer: string; detail: string }>
    }

    it('an empty name: at least 1 character, singular', async () => {
      assert.deepEqual(await errorsOf('POST', '/api/agents', { name: '' }), [
        { pointer: '/name', detail: 'must be at least 1 character long (Unicode code points)' },
      ])
    })

    it('a malformed id: what a UUID is, without the spec', async () => {
      const [error] = await errorsOf('GET', '/api/agents/not-a-uuid')
      assert.equal(error?.pointer, '/path/id')
      assert.equal(error?.detail, 'must be a UUID (versions 1 to 8 with variant 8, 9, a or b, the nil UUID or the max UUID; any case)')
    })

    it('types as words, counts with their nouns', async () => {
      const errors = await errorsOf('POST', '/api/agents', { name: 5, capabilities: { tools: Array.from({ length: 51 }, (_, i) => `t${i}`) }, instructions: 'x'.repeat(20001) })
      assert.deepEqual(errors, [
        { pointer: '/name', detail: 'must be a string' },
        { pointer: '/instructions', detail: 'must be at most 20000 characters long (Unicode code points)' },
        { pointer: '/capabilities/tools', detail: 'must have at most 50 items' },
      ])
    })

    it('the API docs (/openapi.json) never cite the spec', async () => {
      const res = await send(app, 'GET', '/openapi.json')
      assert.equal(res.statusCode, 200)
      assert.doesNotMatch(res.body, /\bspec [0-9]|§/)
    })
  })
}
