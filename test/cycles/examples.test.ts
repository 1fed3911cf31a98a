// The builtin engine on the worked examples of shared/drafting (copied into fixtures) and on our own cases
// written to the same conventions, through the real HTTP route, on each database.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import type { FastifyInstance } from 'fastify'
import { build, dialects } from '../helpers.js'
import { evaluateCases, type CasesFile } from '../../src/cycles/drafter/evaluation.js'

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
