// `/insights` (link "Scorecards"): agents' scorecards from operators' decisions — a table sortable by each figure
// with a small chart per agent, window, stream and cycle filters and a CSV download; and
// `/insights/agents/:id`: one agent's series charts and its table by cycle and phase (docs/insights.md).
import { useState } from 'react'
import { useQuery } from '@tanstack/react-query'
import { Link } from 'wouter'
import { authorize, request } from '../api/client'
import { Avatar } from '../agents'
import { Empty, ErrorMessage, Loading } from '../ui'
import { useStreams } from './Streams'
import { SeriesChart, Sparkline } from './ScorecardChart'

interface Figures {
  phasesAnswered: number
  decisions: { approved: number; revised: number; rejected: number; expired: number; overridden: number }
  firstPassApprovalRate: number | null
  revisionsPerApprovedOutput: number | null
  decisionTimeMs: { median: number | null; p90: number | null; samples: number }
  toolCalls: { autoRun: number; approved: number; denied: number; failed: number }
  questionsAsked: number
  usage: { inputTokens: number; outputTokens: number }
  costUsd: number | null
  costPerApprovedOutput: number | null
  runsFailed: number
}
interface Row extends Figures { agentId: string; agentName: string | null; providerType: string | null; avatarAssetId: string | null }
interface Detail {
  agent: Row
  window: { from: string; to: string; bucket: 'hour' | 'day' }
  series: Array<Figures & { start: string; end: string }>
  breakdown: Array<Figures & { cycleId: string; triggerName: string; phaseId: string; phaseName: string }>
}

type Format = (f: Figures) => string
const count = (n: number) => n.toLocaleString()
const rate = (n: number | null) => (n === null ? '—' : `${Math.round(n * 100)} %`)
const ms = (n: number | null) => (n === null ? '—' : n < 60_000 ? `${Math.round(n / 1000)} s` : n < 3_600_000 ? `${Math.round(n / 60_000)} min` : `${(n / 3_600_000).toFixed(1)} h`)
const usd = (n: number | null) => (n === null ? '—' : `$${n.toFixed(4)}`)

/** The table's figure columns: the API's dotted sort name, a header, and how a value reads. */
const COLUMNS: Array<{ sort: string; header: string; show: Format }> = [
  { sort: 'phasesAnswered', header: 'Answered', show: (f) => count(f.phasesAnswered) },
  { sort: 'decisions.approved', header: 'Approved', show: (f) => count(f.decisions.approved) },
  { sort: 'decisions.revised', header: 'Revised', show: (f) => count(f.decisions.revised) },
  { sort: 'decisions.rejected', header: 'Rejected', show: (f) => count(f.decisions.rejected) },
  { sort: 'decisions.expired', header: 'Expired', show: (f) => count(f.decisions.expired) },
  { sort: 'firstPassApprovalRate', header: 'First-pass approval', show: (f) => rate(f.firstPassApprovalRate) },
  { sort: 'revisionsPerApprovedOutput', header: 'Revisions per approval', show: (f) => (f.revisionsPerApprovedOutput === null ? '—' : f.revisionsPerApprovedOutput.toFixed(2)) },
  { sort: 'decisionTimeMs.median', header: 'Decision time (median)', show: (f) => ms(f.decisionTimeMs.median) },
  { sort: 'decisionTimeMs.p90', header: 'Decision time (p90)', show: (f) => ms(f.decisionTimeMs.p90) },
  { sort: 'toolCalls.denied', header: 'Tool calls denied', show: (f) => count(f.toolCalls.denied) },
  { sort: 'costUsd', header: 'Cost', show: (f) => usd(f.costUsd) },
  { sort: 'costPerApprovedOutput', header: 'Cost per approved output', show: (f) => usd(f.costPerApprovedOutput) },
  { sort: 'runsFailed', header: 'Runs failed', show: (f) => count(f.runsFailed) },
]

const WINDOWS = [{ days: 7, label: 'Last 7 days' }, { days: 30, label: 'Last 30 days' }, { days: 90, label: 'Last 90 days' }]

function useWindow() {
  const [days, setDays] = useState(30)
  const [streamId, setStreamId] = useState('')
  const [cycleId, setCycleId] = useState('')
  const to = new Date(Math.ceil(Date.now() / 60_000) * 60_000)
  const from = new Date(to.getTime() - days * 86_400_000)
  const query = new URLSearchParams({ from: from.toISOString(), to: to.toISOString(), ...(streamId ? { streamId } : {}), ...(cycleId ? { cycleId } : {}) })
  return { days, setDays, streamId, setStreamId, cycleId, setCycleId, query }
}

function Filters({ w }: { w: ReturnType<typeof useWindow> }) {
  const streams = useStreams()
  const cycles = useQuery({
    queryKey: ['cycles', w.streamId],
    enabled: w.streamId !== '',
    queryFn: () => request<{ data: Array<{ id: string; triggerName: string }> }>('GET', `/api/cycles/streams/${w.streamId}/cycles?limit=100`),
  })
  return (
    <div className="scorecard-filters">
      <label>Window
        <select value={w.days} onChange={(e) => w.setDays(Number(e.target.value))}>
          {WINDOWS.map((o) => <option key={o.days} value={o.days}>{o.label}</option>)}
        </select>
      </label>
      <label>Stream
        <select value={w.streamId} onChange={(e) => { w.setStreamId(e.target.value); w.setCycleId('') }}>
          <option value="">All streams</option>
          {streams.data?.map((s) => <option key={s.id} value={s.id}>{s.name}</option>)}
        </select>
      </label>
      <label>Cycle
        <select value={w.cycleId} onChange={(e) => w.setCycleId(e.target.value)} disabled={w.streamId === ''}>
          <option value="">All cycles</option>
          {cycles.data?.data.map((c) => <option key={c.id} value={c.id}>{c.triggerName}</option>)}
        </select>
      </label>
    </div>
  )
}

async function downloadCsv(path: string, name: string) {
  const headers = new Headers({ accept: 'text/csv' })
  authorize(headers)
  const response = await fetch(path, { headers })
  if (!response.ok) return
  const url = URL.createObjectURL(await response.blob())
  const link = document.createElement('a')
  link.href = url
  link.download = name
  link.click()
  URL.revokeObjectURL(url)
}

const labelOf = (row: Row) => ({ id: row.agentId, name: row.agentName ?? 'Deleted agent', hint: null, avatarAssetId: row.avatarAssetId, known: row.agentName !== null })

export function ScorecardsPage() {
  const w = useWindow()
  const [sort, setSort] = useState('phasesAnswered')
  const [order, setOrder] = useState<'asc' | 'desc'>('desc')
  const rows = useQuery({
    queryKey: ['scorecards', w.query.toString(), sort, order],
    queryFn: () => request<{ data: Row[] }>('GET', `/api/insights/agents?${w.query}&sort=${sort}&order=${order}&limit=100`),
  })
  const sortBy = (column: string) => {
    if (column === sort) setOrder(order === 'desc' ? 'asc' : 'desc')
    else {
      setSort(column)
      setOrder('desc')
    }
  }
  return (
    <>
      <h1>Scorecards</h1>
      <p className="muted">Each agent's work as operators judged it: approvals, revisions, rejections, how long people took to decide, and what an approved output cost.</p>
      <Filters w={w} />
      <p><button type="button" className="secondary small" onClick={() => void downloadCsv(`/api/insights/agents?${w.query}&sort=${sort}&order=${order}`, 'scorecards.csv')}>Download CSV</button></p>
      {rows.isPending ? <Loading what="scorecards" /> : <ErrorMessage error={rows.error} onRetry={() => void rows.refetch()} />}
      {rows.data?.data.length === 0 ? <Empty title="No agent worked in this window.">Scorecards count the phases agents began in it.</Empty> : null}
      {rows.data && rows.data.data.length > 0 ? (
        <div className="scroll-x" tabIndex={0} role="region" aria-label="Agent scorecards (scrolls sideways)">
          <table className="scorecards">
            <caption>Agent scorecards</caption>
            <thead>
              <tr>
                <th scope="col">Agent</th>
                {COLUMNS.map((c) => (
                  <th key={c.sort} scope="col" aria-sort={c.sort === sort ? (order === 'asc' ? 'ascending' : 'descending') : 'none'}>
                    <button type="button" className="ghost small" onClick={() => sortBy(c.sort)}>{c.header}</button>
                  </th>
                ))}
                <th scope="col">Approved per day</th>
              </tr>
            </thead>
            <tbody>
              {rows.data.data.map((row) => (
                <tr key={row.agentId}>
                  <th scope="row">
                    <Link href={`/insights/agents/${row.agentId}`} className="agent-name"><Avatar label={labelOf(row)} size="sm" /><span className="name">{row.agentName ?? 'Deleted agent'}</span></Link>
                  </th>
                  {COLUMNS.map((c) => <td key={c.sort}>{c.show(row)}</td>)}
                  <td><RowSparkline row={row} query={w.query} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  )
}

function RowSparkline({ row, query }: { row: Row; query: URLSearchParams }) {
  const detail = useQuery({
    queryKey: ['scorecard', row.agentId, query.toString(), 'day'],
    queryFn: () => request<Detail>('GET', `/api/insights/agents/${row.agentId}?${query}&bucket=day`),
  })
  if (!detail.data) return null
  const values = detail.data.series.map((p) => p.decisions.approved)
  return <Sparkline label={`${row.agentName ?? 'Agent'}: ${values.reduce((a, b) => a + b, 0)} approved outputs over ${values.length} days`} starts={detail.data.series.map((p) => p.start)} values={values} />
}

export function ScorecardPage({ id }: { id: string }) {
  const w = useWindow()
  const detail = useQuery({ queryKey: ['scorecard', id, w.query.toString()], queryFn: () => request<Detail>('GET', `/api/insights/agents/${id}?${w.query}`) })
  const d = detail.data
  const starts = d?.series.map((p) => p.start) ?? []
  return (
    <>
      <p><Link href="/insights">← Scorecards</Link></p>
      <h1>{d ? `Scorecard: ${d.agent.agentName ?? 'Deleted agent'}` : 'Scorecard'}</h1>
      <Filters w={w} />
      {detail.isPending ? <Loading what="the scorecard" /> : <ErrorMessage error={detail.error} onRetry={() => void detail.refetch()} />}
      {d ? (
        <>
          <p><button type="button" className="secondary small" onClick={() => void downloadCsv(`/api/insights/agents/${id}?${w.query}`, `scorecard-${id}.csv`)}>Download CSV</button></p>
          <dl className="scorecard-summary">
            {COLUMNS.map((c) => <div key={c.sort}><dt>{c.header}</dt><dd>{c.show(d.agent)}</dd></div>)}
          </dl>
          <div className="scorecard-charts">
            <SeriesChart title={`Decisions per ${d.window.bucket}`} starts={starts} lines={[
              { label: 'Approved', values: d.series.map((p) => p.decisions.approved), colour: '#2f9e44' },
              { label: 'Revised', values: d.series.map((p) => p.decisions.revised), colour: '#e8590c' },
              { label: 'Rejected', values: d.series.map((p) => p.decisions.rejected), colour: '#c92a2a' },
            ]} />
            <SeriesChart title="Decision time (minutes)" unit="min" starts={starts} lines={[
              { label: 'Median', values: d.series.map((p) => (p.decisionTimeMs.median === null ? null : p.decisionTimeMs.median / 60_000)), colour: '#1c7ed6' },
              { label: 'p90', values: d.series.map((p) => (p.decisionTimeMs.p90 === null ? null : p.decisionTimeMs.p90 / 60_000)), colour: '#7048e8' },
            ]} />
          </div>
          <div className="scroll-x" tabIndex={0} role="region" aria-label="By cycle and phase (scrolls sideways)">
            <table>
              <caption>By cycle and phase</caption>
              <thead><tr><th scope="col">Cycle</th><th scope="col">Phase</th>{COLUMNS.map((c) => <th key={c.sort} scope="col">{c.header}</th>)}</tr></thead>
              <tbody>
                {d.breakdown.map((b) => (
                  <tr key={`${b.cycleId}/${b.phaseId}`}><th scope="row">{b.triggerName}</th><td>{b.phaseName}</td>{COLUMNS.map((c) => <td key={c.sort}>{c.show(b)}</td>)}</tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      ) : null}
    </>
  )
}
