// The service as a child process, for the tests that need a real one (crash tests, signals, logs): started on
// a free port (PORT=0) with info logs, found by the "Tandem listening on <url>" line it logs, and stopped (SIGTERM)
// or killed (SIGKILL). It inherits the test's environment, TANDEM_SECRET_KEY included (see helpers.ts).
import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { TYPESCRIPT_LOADER } from '../scripts/typescript-loader.mjs'

export interface ChildServer {
  child: ChildProcess
  /** The URL it listens on, once it says so; rejects if it exits before. */
  url: Promise<string>
  /** Every line it has written to stdout so far (its pino log). */
  lines: string[]
  /** How it ended (its exit code, or the signal that ended it), once its output is all read. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** Sends `signal` (SIGTERM by default) unless it has already ended; resolves once it has. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

export interface ChildServerOptions {
  /** What runs: `src/main.ts` from the sources by default (TYPESCRIPT_LOADER), or e.g. ['npm', 'start', '--silent']. */
  command?: string[]
  /** Its stderr: passed through by default. */
  stderr?: 'inherit' | 'pipe' | 'ignore'
}

export function startServer(env: Record<string, string> = {}, options: ChildServerOptions = {}): ChildServer {
  const [command, ...args] = options.command ?? [process.execPath, ...TYPESCRIPT_LOADER, 'src/main.ts']
  const child = spawn(command as string, args, {
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', options.stderr ?? 'inherit'],
  })
  const lines: string[] = []
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })))
  const url = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line)
      const match = /Tandem listening on (http:\/\/[^"\s]+)/.exec(line)
      if (match) resolve(match[1] as string)
    })
    void exited.then(({ code, signal }) => reject(new Error(`the server exited (${signal ?? code}) before it listened`)))
  })
  url.catch(() => {}) // a test that kills the server before it listens need not wait for the URL
  const stop = (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal)
    return exited
  }
  return { child, url, lines, exited, stop }
}

/** Servers on one environment (e.g. one database, one after the other): `stopAll` ends every one still running. */
export function serverGroup(env: Record<string, string>, options: ChildServerOptions = {}): { start(): ChildServer; stopAll(signal?: NodeJS.Signals): Promise<void> } {
  const started: ChildServer[] = []
  return {
    start: () => {
      const server = startServer(env, options)
      started.push(server)
      return server
    },
    stopAll: async (signal) => {
      for (const server of started) await server.stop(signal)
    },
  }
}

/** A request to a child server with an optional JSON body: its status and JSON answer (null when there is none). */
export async function request(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any }> {
  const res = await fetch(base + path, { method, headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...headers }, body: body ? JSON.stringify(body) : undefined })
  return { status: res.status, json: await res.json().catch(() => null) }
}
