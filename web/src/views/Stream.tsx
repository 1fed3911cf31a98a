// `/streams/{id}`: one stream, with tabs for its chat, cycles and runs.
import { useRef, useState, type KeyboardEvent } from 'react'
import { useQuery } from '@tanstack/react-query'
import { Link } from 'wouter'
import { api, unwrap } from '../api/client'
import { useStreamEvents } from '../events'
import { ErrorMessage, Loading } from '../ui'
import { ChatPanel } from './Chat'
import { CyclesPanel } from './Cycles'
import { RunsPanel } from './Runs'

const TABS = ['Chat', 'Cycles', 'Runs'] as const
type Tab = (typeof TABS)[number]

export function StreamPage({ id }: { id: string }) {
  const stream = useQuery({ queryKey: ['stream', id], queryFn: () => unwrap(api.GET('/api/streams/{id}', { params: { path: { id } } })) })
  const [tab, setTab] = useState<Tab>('Chat')
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
        {tab === 'Cycles' ? <CyclesPanel streamId={id} onRunStarted={() => setTab('Runs')} /> : null}
        {tab === 'Runs' ? <RunsPanel streamId={id} poll={poll} /> : null}
      </section>
    </>
  )
}
