// The scorecards themselves: the window a query names (checked), the rows per agent sorted as asked, and one
// agent's detail — a series of time buckets and a breakdown per cycle and phase.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { AppError, notFound, type FieldError } from '../http/problem.js'
import { EMPTY_FIGURES, figuresBy, figuresOf, sumsBy, totalOf, type Figures, type Scope } from './figures.js'
import type { ScorecardRow, Sort } from './schemas.js'

const DAY_MS = 86_400_000
const HOUR_MS = 3_600_000
export const MAX_WINDOW_DAYS = 366
export const DEFAULT_WINDOW_DAYS = 30
export const MAX_BUCKETS = 1000

function invalid(errors: FieldError[]): AppError {
  return new AppError('validation-error', `The query string has ${errors.length} problem${errors.length === 1 ? '' : 's'}; see errors.`, errors)
}

/** The window `[from, to)`: `to` now by default, `from` 30 days before it; at most 366 days. */
export function windowOf(query: { from?: string; to?: string }, nowMs = Date.now()): { from: string; to: string } {
  const to = query.to === undefined ? nowMs : Date.parse(query.to)
  const from = query.from === undefined ? to - DEFAULT_WINDOW_DAYS * DAY_MS : Date.parse(query.from)
  if (from >= to) throw invalid([{ pointer: '/query/from', detail: 'must be before `to`' }])
  if (to - from > MAX_WINDOW_DAYS * DAY_MS) throw invalid([{ pointer: '/query/to', detail: `must be at most ${MAX_WINDOW_DAYS} days after \`from\`` }])
  return { from: new Date(from).toISOString(), to: new Date(to).toISOString() }
}

/** A 404 for a stream or cycle named in the query that is not in the caller's workspace. */
export async function checkFilters(db: Kysely<Database>, workspaceId: string, query: { streamId?: string; cycleId?: string }): Promise<void> {
  if (query.streamId && !(await db.selectFrom('streams').select('id').where('id', '=', query.streamId).where('workspace_id', '=', workspaceId).executeTakeFirst())) throw notFound('Stream')
  if (query.cycleId && !(await db.selectFrom('cycles').select('id').where('id', '=', query.cycleId).where('workspace_id', '=', workspaceId).executeTakeFirst())) throw notFound('Cycle')
}

/** A figure by its dotted name. */
export function figureOf(figures: Figures, sort: Sort): number | null {
  const [head, tail] = sort.split('.') as [keyof Figures, string | undefined]
  const value = figures[head]
  return (tail === undefined ? value : (value as unknown as Record<string, number | null> | null)?.[tail] ?? null) as number | null
}

/** Sorted by the figure, nulls last either way, ties by agentId ascending. */
export function sortRows(rows: ScorecardRow[], sort: Sort, order: 'asc' | 'desc'): ScorecardRow[] {
  return rows.sort((a, b) => {
    const x = figureOf(a, sort)
    const y = figureOf(b, sort)
    if (x !== y) {
      if (x === null) return 1
      if (y === null) return -1
      return order === 'asc' ? x - y : y - x
    }
    return a.agentId < b.agentId ? -1 : a.agentId > b.agentId ? 1 : 0
  })
}

async function agentsById(db: Kysely<Database>, workspaceId: string, ids: string[]) {
  const rows = ids.length === 0 ? [] : await db.selectFrom('agents').select(['id', 'name', 'provider_type', 'avatar_asset_id']).where('workspace_id', '=', workspaceId).where('id', 'in', ids).execute()
  return new Map(rows.map((row) => [row.id, row]))
}

const stripNames = ({ triggerName: _t, phaseName: _p, ...figures }: Figures & { triggerName: string; phaseName: string }): Figures => figures

/** Every agent's row in scope (unsorted). */
export async function scorecardRows(db: Kysely<Database>, scope: Scope): Promise<ScorecardRow[]> {
  const byAgent = await figuresBy(db, scope, 'agent')
  const agents = await agentsById(db, scope.workspaceId, [...byAgent.keys()])
  return [...byAgent].map(([agentId, figures]) => {
    const agent = agents.get(agentId)
    return { agentId, agentName: agent?.name ?? null, providerType: agent?.provider_type ?? null, avatarAssetId: agent?.avatar_asset_id ?? null, ...stripNames(figures) }
  })
}

export type Bucket = 'hour' | 'day'

/** The buckets of a window: UTC hours or days from `from` truncated until past `to` (at most 1,000, else a 400). */
export function bucketsOf(window: { from: string; to: string }, asked: Bucket | undefined): { bucket: Bucket; starts: number[] } {
  const from = Date.parse(window.from)
  const to = Date.parse(window.to)
  const bucket = asked ?? (to - from <= 72 * HOUR_MS ? 'hour' : 'day')
  const size = bucket === 'hour' ? HOUR_MS : DAY_MS
  const first = Math.floor(from / size) * size
  const count = Math.ceil((to - first) / size)
  if (count > MAX_BUCKETS) throw invalid([{ pointer: '/query/bucket', detail: `makes ${count} buckets of this window; at most ${MAX_BUCKETS} (use day, or a shorter window)` }])
  return { bucket, starts: Array.from({ length: count }, (_, i) => first + i * size) }
}

/** One agent's scorecard: its row, the series and the breakdown; 404 when it has no phase run in the workspace. */
export async function agentScorecard(db: Kysely<Database>, scope: Scope & { agentId: string }, asked: Bucket | undefined) {
  const ever = await db.selectFrom('insight_phase_runs').select('phase_run_id').where('workspace_id', '=', scope.workspaceId).where('agent_id', '=', scope.agentId).limit(1).executeTakeFirst()
  if (!ever) throw notFound('Agent')
  const { bucket, starts } = bucketsOf(scope, asked)
  const byBucket = await sumsBy(db, scope, bucket)
  const byPhase = await figuresBy(db, scope, 'cyclePhase')
  const agents = await agentsById(db, scope.workspaceId, [scope.agentId])
  const agent = agents.get(scope.agentId)
  // The buckets split the window, so their sums together are the agent's row: no second read of the window.
  const total = totalOf(byBucket.values())
  const row: ScorecardRow = { agentId: scope.agentId, agentName: agent?.name ?? null, providerType: agent?.provider_type ?? null, avatarAssetId: agent?.avatar_asset_id ?? null, ...(total ? figuresOf(total) : EMPTY_FIGURES) }
  const size = bucket === 'hour' ? HOUR_MS : DAY_MS
  const keyLength = bucket === 'hour' ? 13 : 10
  const series = starts.map((start) => {
    const iso = new Date(start).toISOString()
    const sums = byBucket.get(iso.slice(0, keyLength))
    return { start: iso, end: new Date(start + size).toISOString(), ...(sums ? figuresOf(sums) : EMPTY_FIGURES) }
  })
  const breakdown = [...byPhase]
    .map(([key, figures]) => {
      const [cycleId, phaseId] = key.split('/') as [string, string]
      const { triggerName, phaseName, ...rest } = figures
      return { cycleId, triggerName, phaseId, phaseName, ...rest }
    })
    .sort((a, b) => b.phasesAnswered - a.phasesAnswered || (a.cycleId < b.cycleId ? -1 : a.cycleId > b.cycleId ? 1 : 0) || (a.phaseId < b.phaseId ? -1 : a.phaseId > b.phaseId ? 1 : 0))
  return { agent: row, window: { from: scope.from, to: scope.to, bucket }, series, breakdown }
}
