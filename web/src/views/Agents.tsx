// `/agents`: list, create, edit and delete agents, every field of docs/api-contract.md with its limits; a 400's pointers
// are shown beside the fields they name. A new agent may start from a template, an avatar is uploaded as an
// asset, and a provider/authMode combination that cannot work is named before saving.
import { useEffect, useState, type FormEvent } from 'react'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api, ApiError, unwrap, type Agent, type AgentCreate, type AgentPatch, type AgentTemplate } from '../api/client'
import { AgentName, useAgentLabels, useAgents } from '../agents'
import { authModeWarning } from '../authMode'
import { AUTH_MODE_NAMES, CONFIG_FIELDS, providerName } from '../providers'
import { Empty, ErrorMessage, Field, Loading, useField } from '../ui'
import { AvatarUpload, useTemplates } from './AgentExtras'
import { ToolsPicker } from './ToolsPicker'
import { useCredentials } from './Credentials'

type ProviderType = Agent['providerType']
type AuthMode = NonNullable<Agent['authMode']>
const PROVIDERS: ProviderType[] = ['custom_webhook', 'custom_token_only', 'claude', 'mistral', 'elevenlabs', 'copilot_studio', 'cursor']
const AUTH_MODES: AuthMode[] = ['api_key', 'direct_line', 'none']
interface FormState {
  name: string; instructions: string; endpointUrl: string; providerType: ProviderType; authMode: AuthMode | ''
  credentialId: string; avatarAssetId: string; templateId: string; streaming: boolean; tools: string[]; config: string
}

const blank: FormState = { name: '', instructions: '', endpointUrl: '', providerType: 'custom_webhook', authMode: '', credentialId: '', avatarAssetId: '', templateId: '', streaming: false, tools: [], config: '{}' }

function fromAgent(agent: Agent): FormState {
  return {
    name: agent.name, instructions: agent.instructions ?? '', endpointUrl: agent.endpointUrl ?? '', providerType: agent.providerType,
    authMode: agent.authMode ?? '', credentialId: agent.credentialId ?? '', avatarAssetId: agent.avatarAssetId ?? '', templateId: agent.templateId ?? '',
    streaming: agent.capabilities.streaming, tools: [...agent.capabilities.tools], config: JSON.stringify(agent.config, null, 2),
  }
}

/** The form filled from a template: every field the template sets; the name is kept when one was typed. */
function fromTemplate(form: FormState, template: AgentTemplate): FormState {
  const a = template.agent
  return {
    ...form, templateId: template.id, name: form.name || template.name, providerType: a.providerType ?? 'custom_webhook', authMode: a.authMode ?? '',
    credentialId: a.credentialId ?? form.credentialId, avatarAssetId: a.avatarAssetId ?? form.avatarAssetId, instructions: a.instructions ?? '',
    endpointUrl: a.endpointUrl ?? '', streaming: a.capabilities?.streaming ?? false, tools: [...(a.capabilities?.tools ?? [])],
    config: JSON.stringify(a.config ?? {}, null, 2),
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
  const body = {
    name: form.name, providerType: form.providerType, authMode: optional(form.authMode), credentialId: optional(form.credentialId),
    avatarAssetId: optional(form.avatarAssetId), templateId: optional(form.templateId), instructions: optional(form.instructions),
    endpointUrl: optional(form.endpointUrl), capabilities: { streaming: form.streaming, tools: form.tools }, config,
  }
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)) as AgentCreate
}

export function AgentsPage() {
  const agents = useAgents()
  const [editing, setEditing] = useState<Agent | null>(null)
  // The palette links an agent as /agents#agent-<id>: bring it into view.
  useEffect(() => {
    if (agents.data && location.hash) document.getElementById(location.hash.slice(1))?.scrollIntoView({ block: 'center' })
  }, [agents.data])
  return (
    <>
      <h1>Agents</h1>
      {agents.isPending ? <Loading what="agents" /> : <ErrorMessage error={agents.error} onRetry={() => void agents.refetch()} />}
      {agents.data?.length === 0 ? <Empty title="No agents yet.">Create one below: give it a name and the address it answers at, or a provider and a credential.</Empty> : null}
      <ul className="list">
        {agents.data?.map((agent) => <AgentItem key={agent.id} agent={agent} onEdit={() => setEditing(agent)} />)}
      </ul>
      <AgentForm key={editing?.id ?? 'new'} agent={editing} onDone={() => setEditing(null)} />
    </>
  )
}

function AgentItem({ agent, onEdit }: { agent: Agent; onEdit: () => void }) {
  const queryClient = useQueryClient()
  const label = useAgentLabels()(agent.id)
  const credentials = useCredentials()
  const [confirming, setConfirming] = useState(false)
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/agents/{id}', { params: { path: { id: agent.id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['agents'] }),
  })
  const credential = agent.credentialId ? credentials.data?.find((c) => c.id === agent.credentialId?.toLowerCase()) : undefined
  return (
    <li className="card" id={`agent-${agent.id}`}>
      <div className="spread">
        <strong><AgentName label={label} size="md" /></strong>
        <div className="actions">
          <button type="button" className="secondary small" onClick={onEdit} aria-label={`Edit ${agent.name}`}>Edit</button>
          {confirming ? (
            <>
              <button type="button" className="danger small" onClick={() => remove.mutate()} aria-label={`Confirm deleting ${agent.name}`}>Confirm delete</button>
              <button type="button" className="secondary small" onClick={() => setConfirming(false)}>Keep</button>
            </>
          ) : (
            <button type="button" className="ghost small" onClick={() => setConfirming(true)} aria-label={`Delete ${agent.name}`}>Delete</button>
          )}
        </div>
      </div>
      <p className="muted small">
        {providerName(agent.providerType)}{agent.endpointUrl ? ` → ${agent.endpointUrl}` : ''}
        {agent.credentialId ? ` · credential: ${credential ? credential.name : 'not listed'}` : ''}
      </p>
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
  const credentials = useCredentials()
  const templates = useTemplates()
  const warning = authModeWarning(form.providerType, form.authMode || null, form.credentialId !== '')
  const shown = Object.values(f).some((field) => field.message)
  const submit = (event: FormEvent) => {
    event.preventDefault()
    save.mutate()
  }
  return (
    <form className="card" onSubmit={submit} aria-labelledby="agent-form-title" noValidate>
      <h2 id="agent-form-title">{agent ? `Edit ${agent.name}` : 'New agent'}</h2>
      <Field label="Template" field={f.templateId}>
        <select
          {...f.templateId.input} value={form.templateId}
          onChange={(e) => {
            const template = templates.data?.find((t) => t.id === e.target.value)
            setForm((current) => (template ? fromTemplate(current, template) : { ...current, templateId: e.target.value }))
          }}
        >
          <option value="">(no template)</option>
          {templates.data?.map((t) => <option key={t.id} value={t.id}>{t.name}{t.builtin ? '' : ' (this workspace)'}</option>)}
          {form.templateId && !templates.data?.some((t) => t.id === form.templateId) ? <option value={form.templateId}>{form.templateId}</option> : null}
        </select>
        {templates.data?.find((t) => t.id === form.templateId)?.description ? <small className="muted">{templates.data.find((t) => t.id === form.templateId)!.description}</small> : null}
        <ErrorMessage error={templates.error} />
      </Field>
      <Field label="Name" field={f.name}><input {...f.name.input} value={form.name} onChange={(e) => set('name', e.target.value)} maxLength={120} /></Field>
      <Field label="Instructions" field={f.instructions}><textarea {...f.instructions.input} rows={3} value={form.instructions} onChange={(e) => set('instructions', e.target.value)} maxLength={20000} /></Field>
      <Field label="Endpoint URL" field={f.endpointUrl}><input {...f.endpointUrl.input} type="url" value={form.endpointUrl} onChange={(e) => set('endpointUrl', e.target.value)} maxLength={2048} /></Field>
      <div className="grid-2">
      <Field label="Provider" field={f.providerType}>
        <select {...f.providerType.input} value={form.providerType} onChange={(e) => set('providerType', e.target.value as ProviderType)}>
          {PROVIDERS.map((p) => <option key={p} value={p}>{providerName(p)}</option>)}
        </select>
      </Field>
      <Field label="Auth mode" field={f.authMode}>
        <select {...f.authMode.input} value={form.authMode} onChange={(e) => set('authMode', e.target.value as AuthMode | '')}>
          <option value="">Default for the provider</option>
          {AUTH_MODES.map((m) => <option key={m} value={m}>{AUTH_MODE_NAMES[m] ?? m}</option>)}
        </select>
      </Field>
      <Field label="Credential" field={f.credentialId}>
        <select {...f.credentialId.input} value={form.credentialId} onChange={(e) => set('credentialId', e.target.value)}>
          <option value="">(no credential)</option>
          {credentials.data?.map((c) => <option key={c.id} value={c.id}>{c.name} (secret {c.hint})</option>)}
          {form.credentialId && !credentials.data?.some((c) => c.id === form.credentialId.toLowerCase()) ? <option value={form.credentialId}>a credential not listed ({form.credentialId.slice(-8)})</option> : null}
        </select>
        {credentials.data?.length === 0 ? <small className="muted">No credentials yet: an admin adds them on the Credentials page.</small> : null}
      </Field>
      </div>
      {warning ? <p className="warning" role="status">{warning}</p> : null}
      <div className="grid-2">
      <AvatarUpload
        agentId={agent?.id ?? 'new'} name={form.name} assetId={form.avatarAssetId} serverError={f.avatarAssetId}
        onChange={(id) => set('avatarAssetId', id)}
      />
      <div className="field">
        <label><input type="checkbox" {...f.streaming.input} checked={form.streaming} onChange={(e) => set('streaming', e.target.checked)} /> Streaming</label>
        {f.streaming.message}
      </div>
      </div>
      <ToolsPicker value={form.tools} onChange={(tools) => set('tools', tools)} field={f.tools} />
      <ConfigFields providerType={form.providerType} config={form.config} onChange={(config) => set('config', config)} />
      <details className="advanced">
        <summary>Advanced</summary>
        <Field label="Config (JSON object)" field={f.config}><textarea {...f.config.input} rows={3} value={form.config} onChange={(e) => set('config', e.target.value)} className="mono" /></Field>
      </details>
      <div className="actions">
        <button type="submit" disabled={save.isPending}>{agent ? 'Save agent' : 'Create agent'}</button>
        {agent ? <button type="button" className="secondary" onClick={onDone}>Cancel</button> : null}
      </div>
      {save.error && !shown ? <ErrorMessage error={save.error} /> : null}
      {save.error && shown ? <p role="alert" className="error">The agent was not saved: see the fields marked above.</p> : null}
    </form>
  )
}

/** The provider's config keys as fields (Model, Agent ID, Repository, Ref), kept in step with the JSON under Advanced. */
function ConfigFields({ providerType, config, onChange }: { providerType: string; config: string; onChange: (config: string) => void }) {
  const fields = CONFIG_FIELDS[providerType] ?? []
  if (fields.length === 0) return null
  let parsed: Record<string, unknown> | null = null
  try {
    const value = JSON.parse(config || '{}') as unknown
    if (value && typeof value === 'object' && !Array.isArray(value)) parsed = value as Record<string, unknown>
  } catch {
    parsed = null
  }
  const set = (key: string, value: string) => {
    const next = { ...(parsed ?? {}) }
    if (value === '') delete next[key]
    else next[key] = value
    onChange(JSON.stringify(next, null, 2))
  }
  return (
    <div className="grid-2">
      {fields.map(({ key, label, hint }) => (
        <div className="field" key={key}>
          <label htmlFor={`config-${key}`}>{label}</label>
          <input id={`config-${key}`} aria-describedby={`config-${key}-hint`} value={typeof parsed?.[key] === 'string' ? (parsed[key] as string) : ''} disabled={parsed === null} onChange={(e) => set(key, e.target.value)} />
          <small id={`config-${key}-hint`} className="muted">{parsed === null ? 'Fix the JSON under Advanced first.' : hint}</small>
        </div>
      ))}
    </div>
  )
}
