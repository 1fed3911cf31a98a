// What starts a stream's cycles without a person (docs/operators.md): schedules (cron in a time zone, read in
// words), message triggers (a mention, a prefix, an author type) and inbound hooks (a signed URL whose secret is
// shown once). The stream's Automation tab; each list in the API's order (oldest first). An item whose trigger
// name no saved cycle has reads "No matching cycle", and the API's warning on creating one shows by its field.
import { useId, useState, type FormEvent, type ReactNode } from 'react'
import cronstrue from 'cronstrue'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api, ApiError, unwrap, type MessageTriggerCreate, type ScheduleCreate } from '../api/client'
import { allPages } from '../pages'
import { Badge, Empty, ErrorMessage, Field, Loading, RelativeTime, useField } from '../ui'

const BROWSER_TIMEZONE = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'

/** A cron expression in words ("Every minute", "At 09:00, Monday through Friday"), or null when it does not parse. */
export function cronInWords(cron: string): string | null {
  try {
    return cronstrue.toString(cron.trim(), { use24HourTimeFormat: true, throwExceptionOnParseError: true })
  } catch {
    return null
  }
}

export const CRON_PRESETS: Array<[string, string]> = [
  ['Every minute', '* * * * *'],
  ['Every hour', '0 * * * *'],
  ['Every day at 09:00', '0 9 * * *'],
  ['Weekdays at 09:00', '0 9 * * 1-5'],
  ['Mondays at 09:00', '0 9 * * 1'],
  ['First of the month at 09:00', '0 9 1 * *'],
]

type Names = { list: string; has: (name: string) => boolean }

export function AutomationPanel({ streamId, triggerNames }: { streamId: string; triggerNames: string[] }) {
  const listId = useId()
  const known = new Set(triggerNames.map((n) => n.toLowerCase()))
  const names: Names = { list: listId, has: (name) => known.has(name.toLowerCase()) }
  return (
    <div className="automation">
      <h2>What starts these cycles</h2>
      <p className="muted small">Besides <strong>Start run</strong>: a schedule, a message in this stream, or a call from another system. Each names a saved cycle by its trigger name.</p>
      <datalist id={listId}>{triggerNames.map((name) => <option key={name} value={name} />)}</datalist>
      <Schedules streamId={streamId} names={names} />
      <MessageTriggers streamId={streamId} names={names} />
      <Hooks streamId={streamId} names={names} />
    </div>
  )
}

function NoMatch({ name, names }: { name: string; names: Names }) {
  return names.has(name) ? null : <Badge tone="warning">No matching cycle</Badge>
}

/** The API's warnings on a created item (no-matching-cycle), kept by the Trigger name field until the next add. */
function CreatedWarnings({ data, id }: { data: unknown; id: string }) {
  const warnings = (data as { warnings?: Array<{ code: string; detail: string }> } | undefined)?.warnings
  if (!warnings || warnings.length === 0) return null
  return <p id={id} role="status" className="field-warning small">{warnings.map((w) => w.detail).join(' ')}</p>
}

function Section({ title, children }: { title: string; children: ReactNode }) {
  const id = useId()
  return (
    <section className="card" aria-labelledby={id}>
      <h3 id={id}>{title}</h3>
      {children}
    </section>
  )
}

function Schedules({ streamId, names }: { streamId: string; names: Names }) {
  const warningId = useId()
  const hintId = useId()
  const [preset, setPreset] = useState('')
  const queryClient = useQueryClient()
  const key = ['schedules', streamId]
  const schedules = useQuery({
    queryKey: key,
    queryFn: () => allPages((cursor) => unwrap(api.GET('/api/streams/{streamId}/schedules', { params: { path: { streamId }, query: { limit: 100, ...(cursor ? { cursor } : {}) } } }))),
  })
  const [form, setForm] = useState({ triggerName: '', cron: '', timezone: BROWSER_TIMEZONE })
  const create = useMutation({
    mutationFn: (body: ScheduleCreate) => unwrap(api.POST('/api/streams/{streamId}/schedules', { params: { path: { streamId } }, body })),
    onSuccess: () => {
      setForm((f) => ({ ...f, triggerName: '', cron: '' }))
      setPreset('')
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: key }),
  })
  const toggle = useMutation({
    mutationFn: ({ id, enabled }: { id: string; enabled: boolean }) => unwrap(api.PATCH('/api/schedules/{id}', { params: { path: { id } }, body: { enabled } })),
    onSettled: () => queryClient.invalidateQueries({ queryKey: key }),
  })
  const remove = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/schedules/{id}', { params: { path: { id } } })),
    onSettled: () => queryClient.invalidateQueries({ queryKey: key }),
  })
  const f = { triggerName: useField(create.error, '/triggerName'), cron: useField(create.error, '/cron'), timezone: useField(create.error, '/timezone') }
  const submit = (event: FormEvent) => {
    event.preventDefault()
    create.mutate({ triggerName: form.triggerName.trim(), cron: form.cron.trim(), timezone: form.timezone.trim() || 'UTC' })
  }
  return (
    <Section title="Schedules">
      {schedules.isPending ? <Loading what="schedules" /> : <ErrorMessage error={schedules.error} onRetry={() => void schedules.refetch()} />}
      {schedules.data?.length === 0 ? <Empty title="No schedules.">Add one below, e.g. <code>0 9 * * 1-5</code> for 9:00 on weekdays.</Empty> : null}
      <ul className="list" aria-label="Schedules">
        {schedules.data?.map((s) => (
          <li key={s.id} className="spread">
            <span className="row">
              <strong>{s.triggerName}</strong>
              <NoMatch name={s.triggerName} names={names} />
              <span>{cronInWords(s.cron) ?? s.cron}</span>
              <code>{s.cron}</code>
              <span className="muted small">{s.timezone}</span>
              {s.enabled && s.nextRunAt ? <span className="small">next <RelativeTime iso={s.nextRunAt} /></span> : <Badge tone="neutral">paused</Badge>}
              {s.lastRunAt ? <span className="muted small">last <RelativeTime iso={s.lastRunAt} /></span> : null}
            </span>
            <span className="row">
              <label className="small">
                <input
                  type="checkbox" role="switch" checked={s.enabled} disabled={toggle.isPending}
                  aria-label={`Enabled: ${s.triggerName} at ${s.cron}`} onChange={(e) => toggle.mutate({ id: s.id, enabled: e.target.checked })}
                />
                Enabled
              </label>
              <button type="button" className="ghost small" aria-label={`Delete schedule ${s.triggerName} at ${s.cron}`} onClick={() => remove.mutate(s.id)} disabled={remove.isPending}>Delete</button>
            </span>
          </li>
        ))}
      </ul>
      <ErrorMessage error={toggle.error ?? remove.error} />
      <form onSubmit={submit} aria-label="New schedule" noValidate>
        <div className="row">
          <Field label="Trigger name" field={f.triggerName}><input {...f.triggerName.input} aria-describedby={[f.triggerName.describedBy, create.data?.warnings ? warningId : undefined].filter(Boolean).join(' ') || undefined} list={names.list} value={form.triggerName} onChange={(e) => setForm({ ...form, triggerName: e.target.value })} /></Field>
          <div className="field">
            <label htmlFor={`${hintId}-repeats`}>Repeats</label>
            <select id={`${hintId}-repeats`} value={preset} onChange={(e) => { setPreset(e.target.value); if (e.target.value) setForm({ ...form, cron: e.target.value }) }}>
              <option value="">Custom</option>
              {CRON_PRESETS.map(([label, cron]) => <option key={cron} value={cron}>{label}</option>)}
            </select>
          </div>
          <Field label="Cron" field={f.cron}><input {...f.cron.input} aria-describedby={[f.cron.describedBy, hintId].filter(Boolean).join(' ')} className="mono" value={form.cron} onChange={(e) => { setForm({ ...form, cron: e.target.value }); setPreset(CRON_PRESETS.some(([, c]) => c === e.target.value.trim()) ? e.target.value.trim() : '') }} /></Field>
          <Field label="Time zone" field={f.timezone}><input {...f.timezone.input} value={form.timezone} onChange={(e) => setForm({ ...form, timezone: e.target.value })} /></Field>
          <button type="submit" disabled={create.isPending}>Add schedule</button>
        </div>
        <p id={hintId} className="muted small" aria-live="polite">{form.cron.trim() ? (cronInWords(form.cron) ?? 'Not a cron expression yet: minute, hour, day of the month, month, day of the week.') : <>Five fields: minute, hour, day of the month, month, day of the week; e.g. <code>0 9 * * 1-5</code>.</>}</p>
        <CreatedWarnings data={create.data} id={warningId} />
        {create.error && !Object.values(f).some((x) => x.message) ? <ErrorMessage error={create.error} /> : null}
      </form>
    </Section>
  )
}

function MessageTriggers({ streamId, names }: { streamId: string; names: Names }) {
  const warningId = useId()
  const queryClient = useQueryClient()
  const key = ['message-triggers', streamId]
  const triggers = useQuery({ queryKey: key, queryFn: async () => (await unwrap(api.GET('/api/streams/{streamId}/message-triggers', { params: { path: { streamId } } }))).data })
  const [form, setForm] = useState({ triggerName: '', mention: '', prefix: '', authorType: '' as '' | 'principal' | 'agent' })
  const create = useMutation({
    mutationFn: (body: MessageTriggerCreate) => unwrap(api.POST('/api/streams/{streamId}/message-triggers', { params: { path: { streamId } }, body })),
    onSuccess: () => setForm({ triggerName: '', mention: '', prefix: '', authorType: '' }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: key }),
  })
  const remove = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/message-triggers/{id}', { params: { path: { id } } })),
    onSettled: () => queryClient.invalidateQueries({ queryKey: key }),
  })
  const f = {
    triggerName: useField(create.error, '/triggerName'), mention: useField(create.error, '/match/mention'),
    prefix: useField(create.error, '/match/prefix'), authorType: useField(create.error, '/match/authorType'),
  }
  const matchError = create.error instanceof ApiError ? create.error.problem.errors?.find((e) => e.pointer === '/match')?.detail : undefined
  const submit = (event: FormEvent) => {
    event.preventDefault()
    const match = {
      ...(form.mention.trim() ? { mention: form.mention.trim() } : {}),
      ...(form.prefix.trim() ? { prefix: form.prefix.trim() } : {}),
      ...(form.authorType ? { authorType: form.authorType } : {}),
    }
    create.mutate({ triggerName: form.triggerName.trim(), match })
  }
  const describe = (m: { mention: string | null; prefix: string | null; authorType: string | null }) =>
    [m.mention ? `mentions @${m.mention}` : '', m.prefix ? `starts with “${m.prefix}”` : '', m.authorType ? `written by ${m.authorType === 'agent' ? 'an agent' : 'a person'}` : ''].filter(Boolean).join(', ')
  return (
    <Section title="Message triggers">
      {triggers.isPending ? <Loading what="message triggers" /> : <ErrorMessage error={triggers.error} onRetry={() => void triggers.refetch()} />}
      {triggers.data?.length === 0 ? <Empty title="No message triggers.">Start a cycle when a message mentions someone or starts with a command such as <code>/triage</code>.</Empty> : null}
      <ul className="list" aria-label="Message triggers">
        {triggers.data?.map((t) => (
          <li key={t.id} className="spread">
            <span><strong>{t.triggerName}</strong> <NoMatch name={t.triggerName} names={names} /> <span className="muted">when a new message {describe(t.match)}</span></span>
            <button type="button" className="ghost small" aria-label={`Delete message trigger ${t.triggerName} (${describe(t.match)})`} onClick={() => remove.mutate(t.id)} disabled={remove.isPending}>Delete</button>
          </li>
        ))}
      </ul>
      <ErrorMessage error={remove.error} />
      <form onSubmit={submit} aria-label="New message trigger" noValidate>
        <div className="row">
          <Field label="Trigger name" field={f.triggerName}><input {...f.triggerName.input} aria-describedby={[f.triggerName.describedBy, create.data?.warnings ? warningId : undefined].filter(Boolean).join(' ') || undefined} list={names.list} value={form.triggerName} onChange={(e) => setForm({ ...form, triggerName: e.target.value })} /></Field>
          <Field label="Mention" field={f.mention}><input {...f.mention.input} value={form.mention} onChange={(e) => setForm({ ...form, mention: e.target.value })} /></Field>
          <Field label="Prefix" field={f.prefix}><input {...f.prefix.input} value={form.prefix} onChange={(e) => setForm({ ...form, prefix: e.target.value })} /></Field>
          <Field label="Author" field={f.authorType}>
            <select {...f.authorType.input} value={form.authorType} onChange={(e) => setForm({ ...form, authorType: e.target.value as typeof form.authorType })}>
              <option value="">anyone</option>
              <option value="principal">a person</option>
              <option value="agent">an agent</option>
            </select>
          </Field>
          <button type="submit" disabled={create.isPending}>Add message trigger</button>
        </div>
        <p className="muted small">Mention: a handle, e.g. <code>@maria</code>. Prefix: how the message starts, e.g. <code>/triage</code>.</p>
        <CreatedWarnings data={create.data} id={warningId} />
        {matchError ? <p role="alert" className="error">{`Say what to match: ${matchError}`}</p> : null}
        {create.error && !matchError && !Object.values(f).some((x) => x.message) ? <ErrorMessage error={create.error} /> : null}
      </form>
    </Section>
  )
}

function Hooks({ streamId, names }: { streamId: string; names: Names }) {
  const warningId = useId()
  const queryClient = useQueryClient()
  const key = ['hooks', streamId]
  const hooks = useQuery({ queryKey: key, retry: false, queryFn: async () => (await unwrap(api.GET('/api/streams/{streamId}/hooks', { params: { path: { streamId } } }))).data })
  const [triggerName, setTriggerName] = useState('')
  const [copied, setCopied] = useState(false)
  const create = useMutation({
    mutationFn: () => unwrap(api.POST('/api/streams/{streamId}/hooks', { params: { path: { streamId } }, body: { triggerName: triggerName.trim() } })),
    onSuccess: () => {
      setTriggerName('')
      setCopied(false)
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: key }),
  })
  const remove = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/hooks/{id}', { params: { path: { id } } })),
    onSettled: () => queryClient.invalidateQueries({ queryKey: key }),
  })
  const field = useField(create.error, '/triggerName')
  if (hooks.error instanceof ApiError && hooks.error.status === 403) {
    return <Section title="Inbound hooks"><p className="muted">Only admins see and create inbound hooks.</p></Section>
  }
  const created = create.data
  const copy = async () => {
    if (!created) return
    await navigator.clipboard.writeText(created.secret)
    setCopied(true)
  }
  return (
    <Section title="Inbound hooks">
      {hooks.isPending ? <Loading what="inbound hooks" /> : <ErrorMessage error={hooks.error} onRetry={() => void hooks.refetch()} />}
      {created ? (
        <div className="secret-once" role="status">
          <p><strong>Copy the secret now: it is shown this once.</strong> Sign each call to the URL with it (Standard Webhooks).</p>
          <p>URL: <code>{created.url}</code></p>
          <p>Secret: <code>{created.secret}</code></p>
          <div className="actions">
            <button type="button" onClick={() => void copy().catch(() => setCopied(false))}>{copied ? 'Copied' : 'Copy secret'}</button>
            <button type="button" className="secondary" onClick={() => create.reset()}>Done</button>
          </div>
        </div>
      ) : null}
      {hooks.data?.length === 0 ? <Empty title="No inbound hooks.">Give another system a URL that starts a cycle when it is called.</Empty> : null}
      <ul className="list" aria-label="Inbound hooks">
        {hooks.data?.map((h) => (
          <li key={h.id} className="spread">
            <span><strong>{h.triggerName}</strong> <NoMatch name={h.triggerName} names={names} /> <code className="small">{h.url}</code> <span className="muted small">created <RelativeTime iso={h.createdAt} /></span></span>
            <button type="button" className="ghost small" aria-label={`Delete hook ${h.triggerName} (${h.id.slice(-8)})`} onClick={() => remove.mutate(h.id)} disabled={remove.isPending}>Delete</button>
          </li>
        ))}
      </ul>
      <ErrorMessage error={remove.error} />
      <form onSubmit={(e) => { e.preventDefault(); create.mutate() }} aria-label="New inbound hook" noValidate>
        <div className="row">
          <Field label="Trigger name" field={field}><input {...field.input} aria-describedby={[field.describedBy, created?.warnings ? warningId : undefined].filter(Boolean).join(' ') || undefined} list={names.list} value={triggerName} onChange={(e) => setTriggerName(e.target.value)} /></Field>
          <button type="submit" disabled={create.isPending}>Add hook</button>
        </div>
        <CreatedWarnings data={created} id={warningId} />
        {create.error && !field.message ? <ErrorMessage error={create.error} /> : null}
      </form>
    </Section>
  )
}
