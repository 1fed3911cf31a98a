// `/mcp-servers`: the workspace's MCP servers with their approval rules in words. Admins add one, test its
// connection (the live tool list, each tool saying whether its calls wait for an operator; a 502's detail when the
// server cannot be reached) and remove one after confirming; members read.
import { useState, type FormEvent } from 'react'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api, unwrap } from '../api/client'
import { useAuth } from '../auth'
import { Badge, Empty, ErrorMessage, Field, Loading, RelativeTime, useField } from '../ui'
import { useCredentials } from './Credentials'

type Approval = Record<string, 'always' | 'never'>

/** The approval globs in words: which tools wait for an operator, which run at once. */
export function approvalInWords(approval: Approval): string {
  const always = Object.keys(approval).filter((glob) => approval[glob] === 'always')
  const never = Object.keys(approval).filter((glob) => approval[glob] === 'never')
  if (always.length === 0) return 'No tool call waits for an operator.'
  const list = (globs: string[]) => globs.map((g) => (g === '*' ? 'every tool' : g)).join(', ')
  return `Calls of ${list(always)} wait for an operator's approval${never.length > 0 ? `, except ${list(never)}` : ''}; ${always.includes('*') ? 'no other tool' : 'other tools run without one'}.`
}

export function McpServersPage() {
  const { me } = useAuth()
  const admin = !me || me.role === 'admin'
  const servers = useQuery({ queryKey: ['mcp-servers'], queryFn: async () => (await unwrap(api.GET('/api/mcp-servers'))).data })
  return (
    <>
      <h1>MCP servers</h1>
      <p className="muted">Tools that agents may call, served over MCP (Streamable HTTP). A server's approval rules say which calls wait for an operator.</p>
      {servers.isPending ? <Loading what="MCP servers" /> : <ErrorMessage error={servers.error} onRetry={() => void servers.refetch()} />}
      {servers.data?.length === 0 ? <Empty title="No MCP servers yet.">{admin ? 'Add one below; agents then choose its tools.' : 'An admin adds them; agents then choose their tools.'}</Empty> : null}
      <ul className="list" aria-label="MCP servers">
        {servers.data?.map((server) => <ServerItem key={server.id} server={server} admin={admin} />)}
      </ul>
      {admin ? <ServerForm /> : <p className="muted">Only admins add or remove MCP servers.</p>}
    </>
  )
}

function ServerItem({ server, admin }: { server: { id: string; name: string; url: string; credentialId: string | null; approval: Approval; createdAt: string }; admin: boolean }) {
  const queryClient = useQueryClient()
  const credentials = useCredentials()
  const [confirming, setConfirming] = useState(false)
  const tools = useMutation({ mutationFn: async () => (await unwrap(api.GET('/api/mcp-servers/{id}/tools', { params: { path: { id: server.id } } }))).data })
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/mcp-servers/{id}', { params: { path: { id: server.id } } })),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['mcp-servers'] }),
  })
  const credential = server.credentialId ? credentials.data?.find((c) => c.id === server.credentialId)?.name ?? 'a credential' : null
  return (
    <li className="card">
      <div className="spread">
        <span className="row">
          <strong>{server.name}</strong>
          <code className="small">{server.url}</code>
          {credential ? <Badge tone="neutral">signs in with {credential}</Badge> : null}
        </span>
        <span className="muted small">added <RelativeTime iso={server.createdAt} /></span>
      </div>
      <p className="small">{approvalInWords(server.approval)}</p>
      <div className="actions">
        <button type="button" className="secondary small" onClick={() => tools.mutate()} disabled={tools.isPending}>Test connection</button>
        {admin ? <button type="button" className="ghost small" onClick={() => setConfirming(true)}>Remove server</button> : null}
      </div>
      {tools.isPending ? <p aria-busy="true" aria-live="polite">Asking {server.name} for its tools…</p> : null}
      <ErrorMessage error={tools.error} />
      {tools.data ? (
        <>
          <p role="status" className="small">Connected: {tools.data.length} tool{tools.data.length === 1 ? '' : 's'}.</p>
          <ul className="list compact" aria-label={`Tools of ${server.name}`}>
            {tools.data.map((tool) => (
              <li key={tool.name} className="row">
                <code>{tool.name}</code>
                {tool.approval === 'always' ? <Badge tone="warning">needs approval</Badge> : <Badge tone="neutral">runs without approval</Badge>}
                <span className="muted small">{tool.description}</span>
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {confirming ? (
        <div role="dialog" aria-modal="false" aria-label={`Remove ${server.name}?`} className="confirm">
          <p>Remove <strong>{server.name}</strong>? Agents that name its tools keep them, but those calls will fail.</p>
          <div className="actions">
            <button type="button" className="danger" onClick={() => remove.mutate()} disabled={remove.isPending}>Remove</button>
            <button type="button" className="secondary" onClick={() => setConfirming(false)}>Keep it</button>
          </div>
          <ErrorMessage error={remove.error} />
        </div>
      ) : null}
    </li>
  )
}

function ServerForm() {
  const queryClient = useQueryClient()
  const credentials = useCredentials()
  const [form, setForm] = useState({ name: '', url: '', credentialId: '', needApproval: '' })
  const create = useMutation({
    mutationFn: () => {
      const globs = form.needApproval.split(',').map((g) => g.trim()).filter(Boolean)
      const approval: Approval = Object.fromEntries(globs.map((g) => [g, 'always' as const]))
      return unwrap(api.POST('/api/mcp-servers', { body: { name: form.name.trim(), url: form.url.trim(), ...(form.credentialId ? { credentialId: form.credentialId } : {}), ...(globs.length > 0 ? { approval } : {}) } }))
    },
    onSuccess: () => {
      setForm({ name: '', url: '', credentialId: '', needApproval: '' })
      void queryClient.invalidateQueries({ queryKey: ['mcp-servers'] })
    },
  })
  const f = { name: useField(create.error, '/name'), url: useField(create.error, '/url'), credentialId: useField(create.error, '/credentialId'), approval: useField(create.error, '/approval') }
  const submit = (event: FormEvent) => {
    event.preventDefault()
    create.mutate()
  }
  return (
    <form className="card" onSubmit={submit} aria-label="New MCP server" noValidate>
      <h2>Add a server</h2>
      <div className="row">
        <Field label="Server name" field={f.name}><input {...f.name.input} value={form.name} maxLength={32} onChange={(e) => setForm({ ...form, name: e.target.value })} /></Field>
        <Field label="Server URL" field={f.url}><input {...f.url.input} type="url" value={form.url} onChange={(e) => setForm({ ...form, url: e.target.value })} /></Field>
        <Field label="Credential" field={f.credentialId}>
          <select {...f.credentialId.input} value={form.credentialId} onChange={(e) => setForm({ ...form, credentialId: e.target.value })}>
            <option value="">none</option>
            {credentials.data?.map((c) => <option key={c.id} value={c.id}>{c.name}</option>)}
          </select>
        </Field>
      </div>
      <Field label="Tools that need approval" field={f.approval}>
        <input {...f.approval.input} aria-describedby={[f.approval.describedBy, 'approval-hint'].filter(Boolean).join(' ')} value={form.needApproval} onChange={(e) => setForm({ ...form, needApproval: e.target.value })} />
      </Field>
      <p id="approval-hint" className="muted small">Lower-case name such as <code>files</code>; the URL of its MCP endpoint, e.g. <code>http://127.0.0.1:4100/mcp</code>. Tools that need approval: names or globs separated by commas, e.g. <code>write_*, delete_file</code>; leave empty for none.</p>
      <div className="actions"><button type="submit" disabled={create.isPending}>Add server</button></div>
      {create.error && !Object.values(f).some((x) => x.message) ? <ErrorMessage error={create.error} /> : null}
    </form>
  )
}
