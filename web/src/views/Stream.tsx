// `/streams/{id}`: one stream, with tabs for its chat, cycles, runs and automation; `/streams/{id}/runs/{runId}`
// opens the Runs tab on that run (its permalink).
import { lazy, Suspense, useRef, useState, type KeyboardEvent } from 'react'
import { useQuery } from '@tanstack/react-query'
import { Link } from 'wouter'
import { api, unwrap } from '../api/client'
import { useStreamEvents } from '../events'
import { ErrorMessage, Loading } from '../ui'
import { ChatPanel } from './Chat'
import { CyclesPanel } from './Cycles'
import { RunsPanel } from './Runs'
// Loaded when first opened: it brings the cron-to-words library, which the first load does not need.
const AutomationTab = lazy(() => import('./AutomationTab').then((m) => ({ default: m.AutomationTab })))

const TABS = ['Chat', 'Cycles', 'Runs', 'Automation'] as const
type Tab = (typeof TABS)[number]

export function StreamPage({ id, runId }: { id: string; runId?: string }) {
  const stream = useQuery({ queryKey: ['stream', id], queryFn: () => unwrap(api.GET('/api/streams/{id}', { params: { path: { id } } })) })
  const [tab, setTab] = useState<Tab>(runId ? 'Runs' : 'Chat')
  // The run started or retried here, expanded when the Runs tab shows it.
  const [justStarted, setJustStarted] = useState<string | undefined>(undefined)
  const tabRefs = useRef<Array<HTMLButtonElement | null>>([])
  const poll = useStreamEvents(id)
  if (stream.isPending) return <Loading what="the stream" />
  if (stream.error) return <><h1>Stream</h1><ErrorMessage error={stream.error} /><p><Link href="/">Back to the streams</Link></p></>
  const onKeyDown = (event: KeyboardEvent) => {
    const index = TABS.indexOf(tab)
    const next = event.key === 'ArrowRight' ? (index + 1) % TABS.length : event.key === 'ArrowLeft' ? (index + TABS.length - 1) % TABS.length : -1
    if (next < 0) return
    event.preventDefault()
    setTab(TABS[next]!)
    tabRefs.current[next]?.focus()
  }
  return (
    <>
      <h1>{stream.data.name}</h1>
      {stream.data.description ? <p className="muted">{stream.data.description}</p> : null}
      <div role="tablist" aria-label="Stream" onKeyDown={onKeyDown} className="tabs">
        {TABS.map((name, i) => (
          <button
            key={name}
            ref={(el) => { tabRefs.current[i] = el }}
            role="tab"
            id={`tab-${name}`}
            aria-selected={tab === name}
            aria-controls={`panel-${name}`}
            tabIndex={tab === name ? 0 : -1}
            onClick={() => setTab(name)}
          >
            {name}
          </button>
        ))}
      </div>
      <section role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`}>
        {tab === 'Chat' ? <ChatPanel streamId={id} poll={poll} /> : null}
        {tab === 'Cycles' ? <CyclesPanel streamId={id} onRunStarted={(started) => { setJustStarted(started); setTab('Runs') }} /> : null}
        {tab === 'Runs' ? <RunsPanel streamId={id} poll={poll} permalink={runId} justStarted={justStarted} onStarted={setJustStarted} /> : null}
        {tab === 'Automation' ? <Suspense fallback={<Loading what="automation" />}><AutomationTab streamId={id} /></Suspense> : null}
      </section>
    </>
  )
}
