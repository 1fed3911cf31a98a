// The SQLite jobs table as Kysely sees it (owned by src/jobs/sqlite.ts; types only).

export interface JobTable {
  id: string
  name: string
  payload: string
  run_at: string
  attempts: number
  max_attempts: number
  job_key: string | null
  locked_at: string | null
  last_error: string | null
}
