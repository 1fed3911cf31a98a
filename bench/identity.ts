// `npm run bench:identity`: what identity costs per request or per call, on SQLite in a temporary file.
// - authentication: GET /api/agents/{id} through the whole pipeline (app.inject) by the key-less local admin
//   (no lookup) and with a Bearer key (hash, then one indexed query joining keys, principals and agents);
// - the vault: sealing and opening a 64-character secret (AES-256-GCM), readSecret (query + decrypt);
// - the egress guard's address check.
import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { createApiKey } from '../src/principals/store.js'
import { ensureWorkspace } from '../src/workspaces/store.js'
import { readSecret } from '../src/credentials/store.js'
import { Vault } from '../src/credentials/vault.js'
import { createEgressGuard } from '../src/net/egress.js'

const file = join(tmpdir(), `tandem-bench-identity-${process.pid}.db`)

async function perSecond(seconds: number, run: () => Promise<unknown>): Promise<number> {
  const warmUntil = Date.now() + 500
  while (Date.now() < warmUntil) await run()
  let count = 0
  const start = process.hrtime.bigint()
  const until = Date.now() + seconds * 1000
  while (Date.now() < until) {
    await run()
    count++
  }
  return count / (Number(process.hrtime.bigint() - start) / 1e9)
}

function microsPerCall(iterations: number, run: () => unknown): number {
  for (let i = 0; i < iterations / 10; i++) run()
  const start = process.hrtime.bigint()
  for (let i = 0; i < iterations; i++) run()
  return Number(process.hrtime.bigint() - start) / 1e3 / iterations
}

const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: `sqlite:${file}`, TANDEM_SECRET_KEY: randomBytes(32).toString('base64') }))
try {
  const workspaceId = await ensureWorkspace(app.database.db, 'default')
  const { key } = await createApiKey(app.database.db, { workspaceId, name: 'bench', role: 'admin' })
  const agent = (await app.inject({ method: 'POST', url: '/api/agents', payload: { name: 'Bench' } })).json()
  const url = `/api/agents/${agent.id}`
  const local = await perSecond(seconds, () => app.inject({ method: 'GET', url }))
  const keyed = await perSecond(seconds, () => app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } }))
  console.log(`GET ${'/api/agents/{id}'} (inject, sequential): local admin ${local.toFixed(0)} req/s, Bearer key ${keyed.toFixed(0)} req/s (${(1e6 / keyed - 1e6 / local).toFixed(0)} µs more per request)`)

  const vault = new Vault(randomBytes(32))
  const secret = randomBytes(48).toString('base64')
  const sealed = vault.seal(secret, agent.id)
  console.log(`vault: seal ${microsPerCall(50000, () => vault.seal(secret, agent.id)).toFixed(1)} µs, open ${microsPerCall(50000, () => vault.open(sealed, agent.id)).toFixed(1)} µs (64-character secret)`)
  const credential = (await app.inject({ method: 'POST', url: '/api/credentials', payload: { name: 'bench', secret } })).json()
  const reads = await perSecond(seconds, () => readSecret(app.database.db, workspaceId, credential.id))
  console.log(`readSecret: ${reads.toFixed(0)} calls/s (${(1e6 / reads).toFixed(0)} µs each, query and decryption)`)

  const guard = createEgressGuard(['10.1.0.0/16'])
  const addresses = ['93.184.215.14', '10.0.0.1', '169.254.169.254', '2606:4700:4700::1111', '::ffff:127.0.0.1', '64:ff9b::808:808']
  let i = 0
  console.log(`egress guard: allows() ${microsPerCall(200000, () => guard.allows(addresses[i++ % addresses.length] as string)).toFixed(2)} µs per address`)
} finally {
  await app.close()
  for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true })
}
