// `npm ci` on a Node older than package.json's engines is refused before it installs anything: .npmrc sets
// engine-strict, which npm reads from the project's folder.
import { it } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'

it('.npmrc makes npm refuse a Node outside engines', () => {
  const settings = readFileSync('.npmrc', 'utf8').split('\n').map((line) => line.trim())
  assert.ok(settings.includes('engine-strict=true'), '.npmrc: engine-strict=true')
})
