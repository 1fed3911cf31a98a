// The agent form's tools picker (capabilities.tools, at most 50 entries): Tandem's own tools, then each MCP
// server of the workspace with the tools it lists now (GET /api/mcp-servers, GET /api/mcp-servers/{id}/tools),
// a server's "every tool" entry (`<server>.*`), and any other entry kept as a chip (the spec accepts any string).
import { useState, type KeyboardEvent } from 'react'
import { useQueries, useQuery } from '@tanstack/react-query'
import { api, unwrap } from '../api/client'
import { allPages } from '../pages'
import { Badge, describeError, Loading, type useField } from '../ui'

export const MAX_TOOLS = 50

/** Tandem's own tools (docs/agents-and-vendors.md); the console imports nothing from the server, so they are listed here. */
export const TANDEM_TOOLS: Array<{ name: string; description: string }> = [
  { name: 'tandem.read_messages', description: 'Reads the stream’s latest messages (up to 50), oldest first.' },
  { name: 'tandem.post_message', description: 'Posts an interim message in the stream as the agent.' },
  { name: 'tandem.ask_operator', description: 'Asks the phase’s operators a question and waits for the answer.' },
]

function useMcpServers() {
  return useQuery({
    queryKey: ['mcp-servers'],
    queryFn: () => allPages((cursor) => unwrap(api.GET('/api/mcp-servers', { params: { query: { limit: 100, ...(cursor ? { cursor } : {}) } } }))),
    staleTime: 60_000,
  })
}

export function ToolsPicker({ value, onChange, field }: { value: string[]; onChange: (tools: string[]) => void; field: ReturnType<typeof useField> }) {
  const servers = useMcpServers()
  const lists = useQueries({
    queries: (servers.data ?? []).map((server) => ({
      queryKey: ['mcp-servers', server.id, 'tools'],
      queryFn: () => unwrap(api.GET('/api/mcp-servers/{id}/tools', { params: { path: { id: server.id } } })),
      staleTime: 60_000,
      retry: false,
    })),
  })
  const chosen = new Set(value)
  const full = value.length >= MAX_TOOLS
  const toggle = (name: string, on: boolean) => {
    // "Every tool" of a server replaces the server's single entries, which it covers.
    const covered = (entry: string) => name.endsWith('.*') && entry !== name && entry.startsWith(name.slice(0, -1))
    if (on) onChange(chosen.has(name) ? value : [...value.filter((t) => !covered(t)), name])
    else onChange(value.filter((t) => t !== name))
  }
  const serverNames = new Set((servers.data ?? []).map((s) => s.name))
  const belongs = (entry: string) => TANDEM_TOOLS.some((t) => t.name === entry) || serverNames.has(entry.split('.')[0]!)
  const others = value.filter((entry) => !belongs(entry))
  const id = field.input.id

  const check = (name: string, description: string, extra?: { approval?: boolean; covered?: boolean }) => {
    const descriptionId = `${id}-${name.replace(/[^a-zA-Z0-9_-]/g, '_')}`
    const on = chosen.has(name) || extra?.covered === true
    return (
      <li key={name}>
        <label>
          <input
            type="checkbox" checked={on} disabled={extra?.covered || (!on && full)} aria-describedby={descriptionId}
            onChange={(e) => toggle(name, e.target.checked)}
          />{' '}
          <code>{name}</code>
        </label>
        {extra?.approval ? <> <Badge tone="warning">needs approval</Badge></> : null}
        <small id={descriptionId} className="muted tool-description">
          {description || 'No description.'}{extra?.covered ? ' (included: every tool of this server is chosen)' : ''}
        </small>
      </li>
    )
  }

  return (
    <fieldset className="tools-picker" aria-describedby={[`${id}-count`, field.describedBy].filter(Boolean).join(' ')}>
      <legend>Tools</legend>
      <small id={`${id}-count`} className="muted">{value.length} of at most {MAX_TOOLS} chosen.</small>
      {field.message}
      <fieldset className="tool-group">
        <legend>Tandem</legend>
        <ul className="tool-list">{TANDEM_TOOLS.map((tool) => check(tool.name, tool.description))}</ul>
      </fieldset>
      {servers.isPending ? <Loading what="MCP servers" /> : null}
      {servers.error ? (
        <div role="alert" className="error">
          The MCP servers could not be read: {describeError(servers.error)}
          <div className="actions"><button type="button" className="secondary small" onClick={() => void servers.refetch()}>Try again</button></div>
        </div>
      ) : null}
      {servers.data?.length === 0 ? <small className="muted">No MCP servers are registered in this workspace: an admin adds one with <code>POST /api/mcp-servers</code>, and its tools are listed here.</small> : null}
      {servers.data?.map((server, i) => {
        const list = lists[i]
        const every = `${server.name}.*`
        const everyChosen = chosen.has(every)
        const listed = list?.data?.data ?? []
        // Entries of this server that its list does not (or cannot) show now stay visible and removable.
        const unlisted = value.filter((entry) => entry !== every && entry.startsWith(`${server.name}.`) && !listed.some((t) => `${server.name}.${t.name}` === entry))
        return (
          <fieldset key={server.id} className="tool-group">
            <legend>MCP server {server.name}</legend>
            <ul className="tool-list">
              {check(every, `Every tool ${server.name} lists when the agent runs.`)}
              {listed.map((tool) => check(`${server.name}.${tool.name}`, tool.description, { approval: tool.approval === 'always', covered: everyChosen }))}
              {unlisted.map((entry) => check(entry, 'Not in the server’s list now.'))}
            </ul>
            {list?.isPending ? <Loading what={`the tools of ${server.name}`} /> : null}
            {list?.error ? (
              <div role="alert" className="error">
                The tools of {server.name} could not be listed: {describeError(list.error)}
                <div className="actions"><button type="button" className="secondary small" onClick={() => void list.refetch()} aria-label={`Try again listing ${server.name}`}>Try again</button></div>
              </div>
            ) : null}
            {list?.data && listed.length === 0 ? <small className="muted">{server.name} lists no tools.</small> : null}
          </fieldset>
        )
      })}
      <OtherTools others={others} full={full} onAdd={(entry) => toggle(entry, true)} onRemove={(entry) => toggle(entry, false)} />
    </fieldset>
  )
}

/** Entries that name no tool listed above (a server not registered, a typo): kept, shown as chips, removable. */
function OtherTools({ others, full, onAdd, onRemove }: { others: string[]; full: boolean; onAdd: (entry: string) => void; onRemove: (entry: string) => void }) {
  const [text, setText] = useState('')
  const add = () => {
    const entry = text.trim()
    if (entry === '') return
    onAdd(entry)
    setText('')
  }
  const onKey = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key === 'Enter') {
      event.preventDefault()
      add()
    }
  }
  return (
    <div className="tool-group">
      {others.length > 0 ? (
        <>
          <small className="muted">Other entries (they name no tool listed above; at run time they are skipped with a warning):</small>
          <ul className="chips" aria-label="Other tool entries">
            {others.map((entry) => (
              <li key={entry} className="chip"><code>{entry}</code><button type="button" onClick={() => onRemove(entry)} aria-label={`Remove ${entry}`}>×</button></li>
            ))}
          </ul>
        </>
      ) : null}
      <div className="chip-input">
        <input aria-label="Other tool" placeholder="server.tool" value={text} maxLength={200} disabled={full} onChange={(e) => setText(e.target.value)} onKeyDown={onKey} />
        <button type="button" className="secondary small" onClick={add} disabled={full || text.trim() === ''}>Add tool</button>
      </div>
    </div>
  )
}
