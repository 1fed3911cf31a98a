// `/agents`: list, create, edit and delete agents, every field of spec 2.2 with its limits; a 400's pointers
// are shown beside the fields they name.
import { useState, type FormEvent } from 'react'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api, ApiError, unwrap, type Agent, type AgentCreate, type AgentPatch } from '../api/client'
import { allPages } from '../pages'
import { ErrorMessage, Field, Loading, shortId, useField } from '../ui'

type ProviderType = Agent['providerType']
type AuthMode = NonNullable<Agent['authMode']>
const PROVIDERS: ProviderType[] = ['custom_webhook', 'custom_token_only', 'claude', 'mistral', 'elevenlabs', 'copilot_studio', 'cursor']
const AUTH_MODES: AuthMode[] = ['api_key', 'direct_line', 'none']
const NIL_UUID = '00000000-0000-0000-0000-000000000000'

export function useAgents() {
  return useQuery({
    queryKey: ['agents'],
    queryFn: () => allPages((cursor) => unwrap(api.GET('/api/agents', { params: { query: { limit: 100, ...(cursor ? { cursor } : {}) } } }))),
  })
}

/** An agent's name by id ("people" for the nil UUID), for phases and messages. */
export function useAgentNames() {
  const agents = useAgents()
  return (id: string) => (id === NIL_UUID ? 'people (no agent)' : agents.data?.find((a) => a.id === id.toLowerCase())?.name ?? `unknown (${shortId(id)})`)
}

interface FormState {
  name: string; instructions: string; endpointUrl: string; providerType: ProviderType; authMode: AuthMode | ''
  credentialId: string; avatarAssetId: string; templateId: string; streaming: boolean; tools: string; config: string
}

const blank: FormState = { name: '', instructions: '', endpointUrl: '', providerType: 'custom_webhook', authMode: '', credentialId: '', avatarAssetId: '', templateId: '', streaming: false, tools: '', config: '{}' }

function fromAgent(agent: Agent): FormState {
  return {
    name: agent.name, instructions: agent.instructions ?? '', endpointUrl: agent.endpointUrl ?? '', providerType: agent.providerType,
    authMode: agent.authMode ?? '', credentialId: agent.credentialId ?? '', avatarAssetId: agent.avatarAssetId ?? '', templateId: agent.templateId ?? '',
    streaming: agent.capabilities.streaming, tools: agent.capabilities.tools.join(', '), config: JSON.stringify(agent.config, null, 2),
  }
}

class ConfigError extends ApiError {}

/** The body: empty optional fields are left out when creating and cleared (null) when editing. */
function toBody(form: FormState, editing: boolean) {
  let config: Record<string, unknown>
  try {
    config = JSON.parse(form.config || '{}')
  } catch {
    throw new ConfigError(400, { detail: 'Config is not valid JSON.', errors: [{ pointer: '/config', detail: 'must be a JSON object' }] })
  }
  const optional = (value: string) => (value === '' ? (editing ? null : undefined) : value)
  const tools = form.tools.split(',').map((t) => t.trim()).filter((t) => t !== '')
  const body = {
    name: form.name, providerType: form.providerType, authMode: optional(form.authMode), credentialId: optional(form.credentialId),
    avatarAssetId: optional(form.avatarAssetId), templateId: optional(form.templateId), instructions: optional(form.instructions),
    endpointUrl: optional(form.endpointUrl), capabilities: { streaming: form.streaming, tools }, config,
  }
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)) as AgentCreate
}

export function AgentsPage() {
  const agents = useAgents()
  const [editing, setEditing] = useState<Agent | null>(null)
  return (
    <>
      <h1>Agents</h1>
      {agents.isPending ? <Loading /> : <ErrorMessage error={agents.error} />}
      {agents.data?.length === 0 ? <p>No agents yet.</p> : null}
      <ul className="list">
        {agents.data?.map((agent) => <AgentItem key={agent.id} agent={agent} onEdit={() => setEditing(agent)} />)}
      </ul>
      <AgentForm key={editing?.id ?? 'new'} agent={editing} onDone={() => setEditing(null)} />
    </>
  )
}

function AgentItem({ agent, onEdit }: { agent: Agent; onEdit: () => void }) {
  const queryClient = useQueryClient()
  const [confirming, setConfirming] = useState(false)
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/agents/{id}', { params: { path: { id: agent.id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['agents'] }),
  })
  return (
    <li className="card">
      <strong>{agent.name}</strong> <span className="muted">{agent.providerType}{agent.endpointUrl ? ` → ${agent.endpointUrl}` : ''}</span>
      <div className="actions">
        <button type="button" onClick={onEdit} aria-label={`Edit ${agent.name}`}>Edit</button>
        {confirming ? (
          <>
            <button type="button" onClick={() => remove.mutate()} aria-label={`Confirm deleting ${agent.name}`}>Confirm delete</button>
            <button type="button" onClick={() => setConfirming(false)}>Keep</button>
          </>
        ) : (
          <button type="button" onClick={() => setConfirming(true)} aria-label={`Delete ${agent.name}`}>Delete</button>
        )}
      </div>
      <ErrorMessage error={remove.error} />
    </li>
  )
}

function AgentForm({ agent, onDone }: { agent: Agent | null; onDone: () => void }) {
  const queryClient = useQueryClient()
  const [form, setForm] = useState<FormState>(agent ? fromAgent(agent) : blank)
  const set = <K extends keyof FormState>(key: K, value: FormState[K]) => setForm((f) => ({ ...f, [key]: value }))
  const save = useMutation({
    mutationFn: async () => {
      const body = toBody(form, agent !== null)
      return agent
        ? unwrap(api.PATCH('/api/agents/{id}', { params: { path: { id: agent.id } }, body: body as AgentPatch }))
        : unwrap(api.POST('/api/agents', { body }))
    },
    onSuccess: () => {
      setForm(blank)
      void queryClient.invalidateQueries({ queryKey: ['agents'] })
      onDone()
    },
  })
  const f = {
    name: useField(save.error, '/name'), instructions: useField(save.error, '/instructions'), endpointUrl: useField(save.error, '/endpointUrl'),
    providerType: useField(save.error, '/providerType'), authMode: useField(save.error, '/authMode'), credentialId: useField(save.error, '/credentialId'),
    avatarAssetId: useField(save.error, '/avatarAssetId'), templateId: useField(save.error, '/templateId'),
    streaming: useField(save.error, '/capabilities/streaming'), tools: useField(save.error, '/capabilities/tools'), config: useField(save.error, '/config'),
  }
  const shown = Object.values(f).some((field) => field.message)
  const submit = (event: FormEvent) => {
    event.preventDefault()
    save.mutate()
  }
  return (
    <form className="card" onSubmit={submit} aria-labelledby="agent-form-title" noValidate>
      <h2 id="agent-form-title">{agent ? `Edit ${agent.name}` : 'New agent'}</h2>
      <Field label="Name" field={f.name}><input {...f.name.input} value={form.name} onChange={(e) => set('name', e.target.value)} maxLength={120} /></Field>
      <Field label="Instructions" field={f.instructions}><textarea {...f.instructions.input} rows={3} value={form.instructions} onChange={(e) => set('instructions', e.target.value)} maxLength={20000} /></Field>
      <Field label="Endpoint URL" field={f.endpointUrl}><input {...f.endpointUrl.input} type="url" value={form.endpointUrl} onChange={(e) => set('endpointUrl', e.target.value)} maxLength={2048} placeholder="https://…" /></Field>
      <Field label="Provider" field={f.providerType}>
        <select {...f.providerType.input} value={form.providerType} onChange={(e) => set('providerType', e.target.value as ProviderType)}>
          {PROVIDERS.map((p) => <option key={p} value={p}>{p}</option>)}
        </select>
      </Field>
      <Field label="Auth mode" field={f.authMode}>
        <select {...f.authMode.input} value={form.authMode} onChange={(e) => set('authMode', e.target.value as AuthMode | '')}>
          <option value="">(none set)</option>
          {AUTH_MODES.map((m) => <option key={m} value={m}>{m}</option>)}
        </select>
      </Field>
      <Field label="Credential id" field={f.credentialId}><input {...f.credentialId.input} value={form.credentialId} onChange={(e) => set('credentialId', e.target.value)} /></Field>
      <Field label="Avatar asset id" field={f.avatarAssetId}><input {...f.avatarAssetId.input} value={form.avatarAssetId} onChange={(e) => set('avatarAssetId', e.target.value)} /></Field>
      <Field label="Template id" field={f.templateId}><input {...f.templateId.input} value={form.templateId} onChange={(e) => set('templateId', e.target.value)} /></Field>
      <div className="field">
        <label><input type="checkbox" {...f.streaming.input} checked={form.streaming} onChange={(e) => set('streaming', e.target.checked)} /> Streaming</label>
        {f.streaming.message}
      </div>
      <Field label="Tools (comma-separated, at most 50)" field={f.tools}><input {...f.tools.input} value={form.tools} onChange={(e) => set('tools', e.target.value)} /></Field>
      <Field label="Config (JSON object)" field={f.config}><textarea {...f.config.input} rows={3} value={form.config} onChange={(e) => set('config', e.target.value)} className="mono" /></Field>
      <button type="submit" disabled={save.isPending}>{agent ? 'Save agent' : 'Create agent'}</button>
      {agent ? <button type="button" onClick={onDone}>Cancel</button> : null}
      {save.error && !shown ? <ErrorMessage error={save.error} /> : null}
      {save.error && shown ? <p role="alert" className="error">The agent was not saved: see the fields marked above.</p> : null}
    </form>
  )
}
