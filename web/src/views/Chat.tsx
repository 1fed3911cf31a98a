// A stream's chat: messages oldest first (live), a rich-text composer, edits with If-Match (a lost race shows
// the newer version and keeps the person's text), and each message's earlier versions.
import { useRef, useState } from 'react'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api, ApiError, unwrap, type Message as ApiMessage } from '../api/client'
import { canActAs, useAuth } from '../auth'
import { allPages } from '../pages'
import { RichTextEditor, type EditorHandle } from '../richtext/Editor'
import { RichText } from '../richtext/RichText'
import { emptyContent, type Content } from '../richtext/mapping'
import { ErrorMessage, Loading, shortId, useField } from '../ui'

type Message = ApiMessage

export function ChatPanel({ streamId, poll }: { streamId: string; poll: number | false }) {
  const messages = useQuery({
    queryKey: ['messages', streamId],
    queryFn: () => allPages((cursor) => unwrap(api.GET('/api/chat/streams/{streamId}/messages', { params: { path: { streamId }, query: { limit: 100, ...(cursor ? { cursor } : {}) } } }))),
    refetchInterval: poll,
  })
  return (
    <>
      <h2 className="sr-only">Chat</h2>
      {messages.isPending ? <Loading /> : <ErrorMessage error={messages.error} />}
      <ol className="messages" aria-label="Messages" aria-live="polite">
        {(messages.data as Message[] | undefined)?.map((message) => <MessageItem key={message.id} message={message} />)}
      </ol>
      <Composer streamId={streamId} />
    </>
  )
}

function Composer({ streamId }: { streamId: string }) {
  const queryClient = useQueryClient()
  const editor = useRef<EditorHandle>(null)
  const send = useMutation({
    mutationFn: (content: Content) => unwrap(api.POST('/api/chat/streams/{streamId}/messages', { params: { path: { streamId } }, body: { content } })),
    onSuccess: () => {
      editor.current?.setContent(emptyContent())
      void queryClient.invalidateQueries({ queryKey: ['messages', streamId] })
    },
  })
  const field = useField(send.error, '/content')
  const submit = () => {
    if (editor.current && !send.isPending) send.mutate(editor.current.content())
  }
  return (
    <div className="card composer">
      <RichTextEditor label="Message" initial={emptyContent()} onSubmit={submit} describedBy={field.describedBy} handle={editor} />
      {field.message}
      <button type="button" onClick={submit} disabled={send.isPending}>Send</button>
      {send.error && !field.message ? <ErrorMessage error={send.error} /> : null}
    </div>
  )
}

function MessageItem({ message }: { message: Message }) {
  const { me } = useAuth()
  const [editing, setEditing] = useState(false)
  const [history, setHistory] = useState(false)
  const mine = me?.principalId === message.authorId
  const author = message.authorType === 'agent' ? `Agent ${shortId(message.authorId)}` : mine ? 'You' : `@${shortId(message.authorId)}`
  return (
    <li className={message.authorType === 'agent' ? 'message agent' : 'message'}>
      <div className="meta">
        <strong>{author}</strong>
        {message.authorType === 'agent' ? <span className="badge">agent</span> : null}
        <time dateTime={message.createdAt}>{new Date(message.createdAt).toLocaleString()}</time>
        {message.editedAt ? <span className="muted">(edited, revision {message.revision})</span> : null}
      </div>
      {editing ? <EditForm message={message} onDone={() => setEditing(false)} /> : <RichText content={message.content as Content} />}
      <div className="actions">
        {!editing && canActAs(me, message.authorId) && message.authorType !== 'agent' ? (
          <button type="button" onClick={() => setEditing(true)}>Edit</button>
        ) : null}
        {message.revision > 1 ? (
          <button type="button" aria-expanded={history} onClick={() => setHistory(!history)}>Earlier versions</button>
        ) : null}
      </div>
      {history ? <Revisions id={message.id} revision={message.revision} /> : null}
    </li>
  )
}

function EditForm({ message, onDone }: { message: Message; onDone: () => void }) {
  const queryClient = useQueryClient()
  const editor = useRef<EditorHandle>(null)
  // The version this edit is based on; after a lost race it becomes the newer one, so Save again is deliberate.
  const [base, setBase] = useState<Message>(message)
  const [newer, setNewer] = useState<Message | null>(null)
  const save = useMutation({
    mutationFn: async (content: Content) => {
      const { data, error, response } = await api.PATCH('/api/chat/messages/{id}', {
        params: { path: { id: message.id } },
        headers: { 'if-match': `"${base.revision}"` },
        body: { content },
      })
      if (response.status === 412) {
        const latest = (await unwrap(api.GET('/api/chat/messages/{id}', { params: { path: { id: message.id } } }))) as Message
        setNewer(latest)
        setBase(latest)
        throw new ApiError(412, { status: 412, detail: 'Someone else changed this message while you were editing it.' })
      }
      return unwrap(Promise.resolve({ data, error, response }))
    },
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['messages', message.streamId] })
      onDone()
    },
  })
  const field = useField(save.error, '/content')
  const submit = () => {
    if (editor.current && !save.isPending) save.mutate(editor.current.content())
  }
  return (
    <div className="edit">
      {newer ? (
        <div role="alert" className="conflict">
          <p><strong>This message was changed while you were editing it.</strong> The newer version (revision {newer.revision}) is below; your text is kept in the editor. Save again to replace the newer version, or Cancel.</p>
          <blockquote aria-label="Newer version"><RichText content={newer.content as Content} /></blockquote>
        </div>
      ) : null}
      <RichTextEditor label="Edit message" initial={message.content as Content} onSubmit={submit} describedBy={field.describedBy} handle={editor} />
      {field.message}
      <button type="button" onClick={submit} disabled={save.isPending}>Save</button>
      <button type="button" onClick={onDone}>Cancel</button>
      {save.error && !field.message && !(save.error instanceof ApiError && save.error.status === 412) ? <ErrorMessage error={save.error} /> : null}
    </div>
  )
}

function Revisions({ id, revision }: { id: string; revision: number }) {
  const revisions = useQuery({
    queryKey: ['revisions', id, revision],
    queryFn: () => allPages((cursor) => unwrap(api.GET('/api/chat/messages/{id}/revisions', { params: { path: { id }, query: { limit: 100, ...(cursor ? { cursor } : {}) } } }))),
  })
  if (revisions.isPending) return <Loading />
  if (revisions.error) return <ErrorMessage error={revisions.error} />
  return (
    <ol className="revisions" aria-label="Earlier versions">
      {revisions.data.map((revision) => (
        <li key={revision.revision}>
          <span className="muted">Revision {revision.revision}, {new Date(revision.createdAt).toLocaleString()}</span>
          <RichText content={revision.content as Content} />
        </li>
      ))}
    </ol>
  )
}
