// `/credentials`: admins create, rename, replace the secret of and delete credentials; members see names and
// hints. The secret is write-only: never shown back, and cleared from the form once sent.
import { useState, type FormEvent } from 'react'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api, unwrap, type Credential } from '../api/client'
import { useAuth } from '../auth'
import { allPages } from '../pages'
import { Empty, ErrorMessage, Field, Loading, RelativeTime, useField } from '../ui'

export function useCredentials() {
  return useQuery({
    queryKey: ['credentials'],
    queryFn: () => allPages((cursor) => unwrap(api.GET('/api/credentials', { params: { query: { limit: 100, ...(cursor ? { cursor } : {}) } } }))),
  })
}

export function CredentialsPage() {
  const { me } = useAuth()
  const admin = !me || me.role === 'admin'
  const credentials = useCredentials()
  return (
    <>
      <h1>Credentials</h1>
      {credentials.isPending ? <Loading what="credentials" /> : <ErrorMessage error={credentials.error} onRetry={() => void credentials.refetch()} />}
      {credentials.data?.length === 0 ? <Empty title="No credentials yet.">{admin ? 'Add a provider\'s API key below; agents then pick it by name.' : 'An admin adds them; agents then pick them by name.'}</Empty> : null}
      <ul className="list">
        {credentials.data?.map((credential) => <CredentialItem key={credential.id} credential={credential} admin={admin} />)}
      </ul>
      {admin ? <CredentialForm /> : <p className="muted">Only admins create or change credentials.</p>}
    </>
  )
}

function CredentialForm({ credential, onDone }: { credential?: Credential; onDone?: () => void }) {
  const queryClient = useQueryClient()
  const [name, setName] = useState(credential?.name ?? '')
  const [secret, setSecret] = useState('')
  const save = useMutation({
    mutationFn: () => {
      if (!credential) return unwrap(api.POST('/api/credentials', { body: { name, secret } }))
      const body: { name?: string; secret?: string } = {}
      if (name !== credential.name) body.name = name
      if (secret !== '') body.secret = secret
      return unwrap(api.PATCH('/api/credentials/{id}', { params: { path: { id: credential.id } }, body }))
    },
    onSuccess: () => {
      setName('')
      setSecret('')
      void queryClient.invalidateQueries({ queryKey: ['credentials'] })
      onDone?.()
    },
    onError: () => setSecret(''),
  })
  const nameField = useField(save.error, '/name')
  const secretField = useField(save.error, '/secret')
  const submit = (event: FormEvent) => {
    event.preventDefault()
    save.mutate()
  }
  return (
    <form className="card" onSubmit={submit} aria-label={credential ? `Change ${credential.name}` : 'New credential'}>
      {credential ? null : <h2>New credential</h2>}
      <Field label="Credential name" field={nameField}><input {...nameField.input} value={name} onChange={(e) => setName(e.target.value)} maxLength={120} /></Field>
      <Field label={credential ? 'New secret (leave empty to keep)' : 'Secret'} field={secretField}>
        <input {...secretField.input} type="password" autoComplete="off" value={secret} onChange={(e) => setSecret(e.target.value)} maxLength={8192} />
      </Field>
      <div className="actions">
        <button type="submit" disabled={save.isPending}>{credential ? 'Save credential' : 'Create credential'}</button>
        {onDone ? <button type="button" className="secondary" onClick={onDone}>Cancel</button> : null}
      </div>
      {save.error && !nameField.message && !secretField.message ? <ErrorMessage error={save.error} /> : null}
    </form>
  )
}

function CredentialItem({ credential, admin }: { credential: Credential; admin: boolean }) {
  const queryClient = useQueryClient()
  const [editing, setEditing] = useState(false)
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/credentials/{id}', { params: { path: { id: credential.id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['credentials'] }),
  })
  return (
    <li className="card">
      <div className="spread">
        <span><strong>{credential.name}</strong> <span className="muted">secret {credential.hint}</span></span>
        {admin && !editing ? (
          <div className="actions">
            <button type="button" className="secondary small" onClick={() => setEditing(true)} aria-label={`Change ${credential.name}`}>Change</button>
            <button type="button" className="ghost small" onClick={() => remove.mutate()} aria-label={`Delete ${credential.name}`}>Delete</button>
          </div>
        ) : null}
      </div>
      <span className="muted small">added <RelativeTime iso={credential.createdAt} /></span>
      {editing ? <CredentialForm credential={credential} onDone={() => setEditing(false)} /> : null}
      <ErrorMessage error={remove.error} />
    </li>
  )
}
