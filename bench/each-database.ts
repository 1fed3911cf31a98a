// What the in-process benchmarks share: a measure run once on a fresh SQLite file and, when BENCH_POSTGRES_URL is
// set, once on a fresh PostgreSQL database (dropped afterwards; BENCH_SKIP_SQLITE=1 measures PostgreSQL alone); and
// the percentile of sorted figures.
import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'

/** The p-th percentile (0–100) of figures sorted in ascending order. */
export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN

export async function onEachDatabase(name: string, measure: (label: string, databaseUrl: string) => Promise<void>): Promise<void> {
  const file = join(tmpdir(), `tandem-bench-${name}-${process.pid}.db`)
  try {
    if (process.env.BENCH_SKIP_SQLITE !== '1') await measure('SQLite', `sqlite:${file}`)
  } finally {
    for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true })
  }
  if (!process.env.BENCH_POSTGRES_URL) return
  const database = `bench_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: process.env.BENCH_POSTGRES_URL })
  await admin.connect()
  await admin.query(`create database ${database}`)
  const url = new URL(process.env.BENCH_POSTGRES_URL)
  url.pathname = `/${database}`
  try {
    await measure('PostgreSQL', url.toString())
  } finally {
    await admin.query(`drop database ${database} with (force)`)
    await admin.end()
  }
}
