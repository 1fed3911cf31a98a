// `.env` in the working directory is read at start-up (server and CLI); a variable already set in the
// environment wins (process.loadEnvFile never overrides one).
import { existsSync } from 'node:fs'

export function loadDotEnv(file = '.env'): void {
  if (existsSync(file)) process.loadEnvFile(file)
}
