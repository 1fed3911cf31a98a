// Agents as people see them: by name, with an avatar (the agent's picture from GET /api/assets/{id}/content
// when it has one, initials otherwise), and a hint (provider, then a short id) where two share a name.
import { useEffect, useState } from 'react'
import { useQuery } from '@tanstack/react-query'
import { api, authorize, unwrap, type Agent } from './api/client'
import { allPages } from './pages'
import { shortId } from './ui'

export const NIL_UUID = '00000000-0000-0000-0000-000000000000'

export function useAgents() {
  return useQuery({
    queryKey: ['agents'],
    queryFn: () => allPages((cursor) => unwrap(api.GET('/api/agents', { params: { query: { limit: 100, ...(cursor ? { cursor } : {}) } } }))),
  })
}

export interface AgentLabel {
  id: string
  name: string
  /** What tells this agent from another of the same name ("claude", "claude · 3f2a1b9c"), or null. */
  hint: string | null
  avatarAssetId: string | null
  known: boolean
  /** What the initials are made from when not the name (a person shown as "You" by their handle). */
  initialsOf?: string
}

/** Labels for a list of agents: a hint only where names collide; the short id too where providers collide as well. */
export function labelAgents(agents: Agent[]): Map<string, AgentLabel> {
  const byName = new Map<string, Agent[]>()
  for (const agent of agents) byName.set(agent.name.toLowerCase(), [...(byName.get(agent.name.toLowerCase()) ?? []), agent])
  const labels = new Map<string, AgentLabel>()
  for (const agent of agents) {
    const namesakes = byName.get(agent.name.toLowerCase())!
    let hint: string | null = null
    if (namesakes.length > 1) {
      const sameProvider = namesakes.filter((a) => a.providerType === agent.providerType).length > 1
      hint = sameProvider ? `${agent.providerType} · ${shortId(agent.id)}` : agent.providerType
    }
    labels.set(agent.id.toLowerCase(), { id: agent.id, name: agent.name, hint, avatarAssetId: agent.avatarAssetId ?? null, known: true })
  }
  return labels
}

/** An agent's label by id: "People" for the nil UUID (a phase done by people), "Deleted agent" for one that is gone. */
export function useAgentLabels() {
  const agents = useAgents()
  const labels = agents.data ? labelAgents(agents.data) : new Map<string, AgentLabel>()
  return (id: string): AgentLabel => {
    if (id === NIL_UUID) return { id, name: 'People', hint: 'no agent', avatarAssetId: null, known: true }
    return labels.get(id.toLowerCase()) ?? { id, name: agents.isPending ? 'Agent' : 'Deleted agent', hint: shortId(id), avatarAssetId: null, known: false }
  }
}

/** Letters only: the first of the first and last words ("Triage (Claude)" → "TC"); one word, its first two. */
export function initials(name: string): string {
  const words = name.trim().split(/\s+/).map((w) => w.replace(/[^\p{L}\p{N}]/gu, '')).filter((w) => w !== '')
  const letters = words.length > 1 ? [words[0]!, words[words.length - 1]!].map((w) => [...w][0]) : [...(words[0] ?? '?')].slice(0, 2)
  return letters.join('').toUpperCase()
}

function colourOf(id: string): number {
  let hash = 0
  for (const char of id) hash = (hash * 31 + char.charCodeAt(0)) >>> 0
  return hash % 8
}

/** The picture's bytes, fetched with the caller's key (an <img> cannot send it) and shown from a blob: URL. */
function useAssetUrl(assetId: string | null): string | null {
  const asset = useQuery({
    queryKey: ['asset', assetId],
    enabled: assetId !== null,
    staleTime: Infinity,
    retry: false,
    queryFn: async () => {
      const headers = new Headers()
      authorize(headers)
      const response = await fetch(`/api/assets/${assetId}/content`, { headers })
      if (!response.ok || !response.headers.get('content-type')?.startsWith('image/')) return null
      return await response.blob()
    },
  })
  const [url, setUrl] = useState<string | null>(null)
  useEffect(() => {
    if (!asset.data) return setUrl(null)
    const objectUrl = URL.createObjectURL(asset.data)
    setUrl(objectUrl)
    return () => URL.revokeObjectURL(objectUrl)
  }, [asset.data])
  return url
}

/** The avatar: an image named after the agent when it has a picture that loads, initials (hidden from screen readers, as the name is beside them) otherwise. */
export function Avatar({ label, size = 'md' }: { label: AgentLabel; size?: 'sm' | 'md' }) {
  const url = useAssetUrl(label.avatarAssetId)
  const [failed, setFailed] = useState(false)
  const className = `avatar c${colourOf(label.id)}${size === 'sm' ? ' sm' : ''}`
  if (url && !failed) return <span className={className}><img src={url} alt={label.name} onError={() => setFailed(true)} /></span>
  if (label.id === NIL_UUID) return <span className={className} aria-hidden="true"><PeopleIcon /></span>
  return <span className={className} aria-hidden="true">{initials(label.initialsOf ?? label.name)}</span>
}

function PeopleIcon() {
  return (
    <svg viewBox="0 0 24 24" focusable="false">
      <circle cx="9" cy="8" r="3.5" /><circle cx="17" cy="9" r="2.5" />
      <path d="M2 20c0-4 3-6.5 7-6.5s7 2.5 7 6.5zM16.5 20c0-2.5-.8-4.4-2.2-5.6 3.8-.6 7.7 1.1 7.7 5.6z" />
    </svg>
  )
}

/** Avatar, name and (where needed) the hint that tells namesakes apart. */
export function AgentName({ label, size = 'sm', avatar = true }: { label: AgentLabel; size?: 'sm' | 'md'; avatar?: boolean }) {
  return (
    <span className="agent-name">
      {avatar ? <Avatar label={label} size={size} /> : null}
      <span className="name">{label.name}</span>
      {label.hint ? <span className="hint">({label.hint})</span> : null}
    </span>
  )
}

export function agentText(label: AgentLabel): string {
  return label.hint ? `${label.name} (${label.hint})` : label.name
}
