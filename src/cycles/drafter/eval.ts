// `npm run eval:drafter -- <cases.json>`: scores the configured engine (TANDEM_DRAFTER) on a cases file.
import { readFileSync } from 'node:fs'
import { buildApp } from '../../app.js'
import { loadConfig } from '../../config.js'
import { evaluateCases, type CasesFile } from './evaluation.js'

const path = process.argv[2]
if (!path) {
  console.error('usage: npm run eval:drafter -- <cases.json>')
  process.exit(2)
}
const file = JSON.parse(readFileSync(path, 'utf8')) as CasesFile
const config = loadConfig({ ...process.env, DATABASE_URL: 'sqlite::memory:', TANDEM_AUTH: 'local', LOG_LEVEL: 'silent' })
const app = await buildApp(config)
try {
  const results = await evaluateCases(app, file)
  for (const result of results.filter((r) => !r.pass)) {
    console.log(`FAIL ${result.id}: ${file.cases.find((c) => c.id === result.id)?.prompt.replace(/\n/g, ' ⏎ ')}`)
    for (const reason of result.reasons) console.log(`  - ${reason}`)
  }
  const passed = results.filter((r) => r.pass).length
  console.log(`${passed}/${results.length} cases pass`)
  process.exitCode = passed === results.length ? 0 : 1
} finally {
  await app.close()
}
