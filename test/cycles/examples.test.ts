// The builtin engine on the worked examples of shared/drafting (copied into fixtures) and on our own cases
// written to the same conventions, through the real HTTP route, on each database.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import type { FastifyInstance } from 'fastify'
import { build, dialects } from '../helpers.js'
import { evaluateCases, type CasesFile } from '../../src/drafter/evaluation.js'

const load = (name: string) => JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8')) as CasesFile

for (const dialect of dialects()) {
  for (const file of ['examples.json', 'extra-cases.json']) {
    describe(`drafter cases of ${file} (${dialect})`, () => {
      // A workspace of its own per file: the files create agents of the same names.
      let app: FastifyInstance
      before(async () => {
        app = await build(dialect)
      })
      after(() => app.close())

      it('passes every case', async () => {
        const cases = load(file)
        const results = await evaluateCases(app, cases)
        const failures = results.filter((r) => !r.pass).map((r) => `${r.id}: ${r.reasons.join('; ')}`)
        assert.deepEqual(failures, [])
        assert.equal(results.length, cases.cases.length)
      })
    })
  }
}

for (const dialect of dialects()) for (const [file, atLeast] of [['paraphrases.json', 150], ['drafts.json', 60]] as const) {
  describe(`drafter paraphrase set ${file} (${dialect})`, () => {
    let app: FastifyInstance
    before(async () => {
      app = await build(dialect)
    })
    after(() => app.close())

    it('passes every tuning case, at least 95 % of the held-out half, and covers every family in both halves', async () => {
      const cases = load(file)
      const results = await evaluateCases(app, cases)
      assert.ok(cases.cases.length >= atLeast)
      const tuning = results.filter((r) => r.split === 'tuning')
      const heldOut = results.filter((r) => r.split === 'held-out')
      assert.deepEqual(tuning.filter((r) => !r.pass).map((r) => `${r.id}: ${r.reasons.join('; ')}`), [])
      const heldOutRate = heldOut.filter((r) => r.pass).length / heldOut.length
      assert.ok(heldOutRate >= 0.95, `held-out ${(heldOutRate * 100).toFixed(1)} %: ${heldOut.filter((r) => !r.pass).map((r) => r.id).join(', ')}`)
      const families = new Set(results.map((r) => r.family))
      for (const family of families) {
        assert.ok(tuning.some((r) => r.family === family) && heldOut.some((r) => r.family === family), family)
      }
    })
  })
}

describe('the shared examples', () => {
  it('are the ones in ../shared/drafting when that folder is present', () => {
    let shared: string
    try {
      shared = readFileSync(new URL('../../../shared/drafting/examples.json', import.meta.url), 'utf8')
    } catch {
      return
    }
    assert.deepEqual(JSON.parse(shared), load('examples.json'))
  })
})
