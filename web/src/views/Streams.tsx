// `/`: the workspace's streams (oldest first) and a form to create one.
import { useState, type FormEvent } from 'react'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { Link } from 'wouter'
import { api, unwrap } from '../api/client'
import { allPages } from '../pages'
import { Empty, ErrorMessage, Field, Loading, RelativeTime, useField } from '../ui'

export function useStreams() {
  return useQuery({
    queryKey: ['streams'],
    queryFn: () => allPages((cursor) => unwrap(api.GET('/api/streams', { params: { query: { limit: 100, ...(cursor ? { cursor } : {}) } } }))),
  })
}

export function StreamsPage() {
  const queryClient = useQueryClient()
  const streams = useStreams()
  const [name, setName] = useState('')
  const [description, setDescription] = useState('')
  const create = useMutation({
    mutationFn: () => unwrap(api.POST('/api/streams', { body: { name, ...(description ? { description } : {}) } })),
    onSuccess: () => {
      setName('')
      setDescription('')
      void queryClient.invalidateQueries({ queryKey: ['streams'] })
    },
  })
  const nameField = useField(create.error, '/name')
  const descriptionField = useField(create.error, '/description')
  const submit = (event: FormEvent) => {
    event.preventDefault()
    create.mutate()
  }
  return (
    <>
      <div className="page-head"><h1>Streams</h1><span className="muted small">Press <kbd>Ctrl K</kbd> to jump anywhere</span></div>
      {streams.isPending ? <Loading what="streams" /> : <ErrorMessage error={streams.error} onRetry={() => void streams.refetch()} />}
      {streams.data?.length === 0 ? <Empty title="No streams yet.">A stream is where people and agents work together: create the first one below.</Empty> : null}
      {streams.data && streams.data.length > 0 ? (
        <ul className="list stream-list">
          {streams.data.map((stream) => (
            <li key={stream.id} className="stream-row">
              <span><Link href={`/streams/${stream.id}`}>{stream.name}</Link>{stream.description ? <span className="muted"> — {stream.description}</span> : null}</span>
              <span className="muted small">created <RelativeTime iso={stream.createdAt} /></span>
            </li>
          ))}
        </ul>
      ) : null}
      <form onSubmit={submit} className="card">
        <h2>New stream</h2>
        <Field label="Stream name" field={nameField}>
          <input {...nameField.input} value={name} onChange={(e) => setName(e.target.value)} maxLength={120} />
        </Field>
        <Field label="Description" field={descriptionField}>
          <textarea {...descriptionField.input} value={description} onChange={(e) => setDescription(e.target.value)} maxLength={2000} rows={2} />
        </Field>
        <div className="actions"><button type="submit" disabled={create.isPending} aria-busy={create.isPending || undefined}>Create stream</button></div>
        {create.error && !nameField.message && !descriptionField.message ? <ErrorMessage error={create.error} /> : null}
      </form>
    </>
  )
}
