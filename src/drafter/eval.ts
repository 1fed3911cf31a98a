// `npm run eval:drafter [-- <cases.json> …]`: scores the configured engine (TANDEM_DRAFTER) on cases files —
// by default the public examples, our extra cases and the paraphrase set — and prints the pass rate per
// file, per family and per split (tuning / held-out). Exit code 1 when a public example fails or the
// held-out half passes below 95 %.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { buildApp } from '../app.js'
import { loadConfig } from '../config.js'
import { evaluateCases, type CaseResult, type CasesFile } from './evaluation.js'

const DEFAULT_FILES = ['examples.json', 'extra-cases.json', 'paraphrases.json', 'drafts.json'].map((name) =>
  fileURLToPath(new URL(`../../test/cycles/fixtures/${name}`, import.meta.url)),
)
const HELD_OUT_TARGET = 0.95

const paths = process.argv.length > 2 ? process.argv.slice(2) : DEFAULT_FILES
const verbose = process.env.EVAL_VERBOSE === '1'
const percent = (passed: number, total: number) => `${passed}/${total} (${total === 0 ? 0 : Math.round((passed / total) * 1000) / 10} %)`

function rates(results: CaseResult[], key: (r: CaseResult) => string): Array<[string, string]> {
  const groups = new Map<string, CaseResult[]>()
  for (const result of results) groups.set(key(result), [...(groups.get(key(result)) ?? []), result])
  return [...groups].map(([name, group]) => [name, percent(group.filter((r) => r.pass).length, group.length)])
}

let failed = false
for (const path of paths) {
  const file = JSON.parse(readFileSync(path, 'utf8')) as CasesFile
  // A fresh app (and in-memory database) per file: the files create agents of the same names.
  const config = loadConfig({ ...process.env, DATABASE_URL: 'sqlite::memory:', TANDEM_AUTH: 'local', LOG_LEVEL: 'silent' })
  const app = await buildApp(config)
  try {
    const results = await evaluateCases(app, file)
    console.log(`\n${path.split('/').pop()}: ${percent(results.filter((r) => r.pass).length, results.length)}`)
    if (verbose) {
      for (const result of results.filter((r) => !r.pass)) {
        console.log(`  FAIL ${result.id} [${result.split}]: ${file.cases.find((c) => c.id === result.id)?.prompt.replace(/\n/g, ' ⏎ ')}`)
        for (const reason of result.reasons) console.log(`    - ${reason}`)
      }
    }
    const splits = new Set(results.map((r) => r.split))
    if (splits.size > 1 || !splits.has('all')) {
      for (const [split, rate] of rates(results, (r) => r.split)) console.log(`  ${split.padEnd(34)} ${rate}`)
      console.log('  per family: all, then tuning | held-out')
      for (const [family, rate] of rates(results, (r) => r.family)) {
        const halves = rates(results.filter((r) => r.family === family), (r) => r.split).sort(([a], [b]) => (a === 'tuning' ? -1 : b === 'tuning' ? 1 : 0))
        console.log(`    ${family.padEnd(32)} ${rate.padEnd(16)} ${halves.map(([, half]) => half).join(' | ')}`)
      }
      const heldOut = results.filter((r) => r.split === 'held-out')
      if (heldOut.length > 0 && heldOut.filter((r) => r.pass).length / heldOut.length < HELD_OUT_TARGET) failed = true
    } else if (results.some((r) => !r.pass)) {
      failed = true
    }
  } finally {
    await app.close()
  }
}
console.log(verbose ? '' : '\n(EVAL_VERBOSE=1 lists every failing case and why.)')
process.exitCode = failed ? 1 : 0
