// Charts of scorecard series with uPlot (canvas; its styles come from its own stylesheet in the bundle and from
// CSSOM properties, which the console's Content-Security-Policy allows: no inline <style>, no eval). Each chart is
// a figure with a text alternative; a sparkline is an image with the figures it shows in its label.
import { useEffect, useRef } from 'react'
import uPlot from 'uplot'
import 'uplot/dist/uPlot.min.css'

export interface Line {
  label: string
  values: Array<number | null>
  /** A colour readable on both themes' backgrounds. */
  colour: string
}

function useChart(options: (width: number) => uPlot.Options, data: uPlot.AlignedData, deps: unknown[]) {
  const box = useRef<HTMLDivElement>(null)
  useEffect(() => {
    const el = box.current
    if (!el) return
    const chart = new uPlot(options(Math.max(120, el.clientWidth)), data, el)
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(120, el.clientWidth), height: chart.height }))
    resize.observe(el)
    return () => {
      resize.disconnect()
      chart.destroy()
    }
  }, deps)
  return box
}

const seconds = (starts: string[]) => starts.map((s) => Date.parse(s) / 1000)

/** A series chart: one line per figure over the buckets' starts, with axes and a legend. */
export function SeriesChart({ title, starts, lines, unit }: { title: string; starts: string[]; lines: Line[]; unit?: string }) {
  const data: uPlot.AlignedData = [seconds(starts), ...lines.map((l) => l.values)]
  const box = useChart(
    (width) => ({
      width,
      height: 220,
      series: [{}, ...lines.map((l) => ({ label: l.label, stroke: l.colour, width: 2, spanGaps: false }))],
      axes: [{ stroke: 'currentColor' }, { stroke: 'currentColor', ...(unit ? { label: unit } : {}) }],
      legend: { show: true },
    }),
    data,
    [JSON.stringify(data), title],
  )
  const summary = lines.map((l) => `${l.label}: ${l.values.filter((v) => v !== null).reduce((a, b) => (a ?? 0) + (b ?? 0), 0)} in all`).join('; ')
  return (
    <figure className="scorecard-chart">
      <figcaption>{title}</figcaption>
      <div ref={box} role="img" aria-label={`${title}. ${summary}.`} />
    </figure>
  )
}

/** A small line without axes or legend (one per table row). */
export function Sparkline({ label, starts, values }: { label: string; starts: string[]; values: Array<number | null> }) {
  const data: uPlot.AlignedData = [seconds(starts), values]
  const box = useChart(
    (width) => ({
      width: Math.min(width, 140),
      height: 32,
      series: [{}, { stroke: '#1c7ed6', width: 1.5 }],
      axes: [{ show: false }, { show: false }],
      legend: { show: false },
      cursor: { show: false },
      scales: { x: { time: true } },
    }),
    data,
    [JSON.stringify(data)],
  )
  return <div ref={box} className="sparkline" role="img" aria-label={label} />
}
