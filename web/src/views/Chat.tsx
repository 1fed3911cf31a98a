// A stream's chat, the timeline of the work: messages oldest first (live), agents by name and avatar, relative
// times, mentions highlighted, a gated phase's output with its decision in place; a rich-text composer, edits
// with If-Match (a lost race shows the newer version and keeps the person's text), and earlier versions.
import { useEffect, useRef, useState } from 'react'
import { useMutation, useQueries, useQuery, useQueryClient } from '@tanstack/react-query'
import { api, ApiError, unwrap, type Message as ApiMessage, type PhaseRun, type Run } from '../api/client'
import { AgentName, Avatar, useAgentLabels, type AgentLabel } from '../agents'
import { canActAs, useAuth } from '../auth'
import { forgetLiveText, useLiveText } from '../events'
import { allPages } from '../pages'
import { RichTextEditor, type EditorHandle } from '../richtext/Editor'
import { RichText } from '../richtext/RichText'
import { emptyContent, type Content } from '../richtext/mapping'
import { Badge, Empty, ErrorMessage, Loading, RelativeTime, shortId, StatusBadge, useField } from '../ui'
import { DecisionForm, inPool } from './Decide'
import { DecisionHistory, FINISHED, useRuns } from './Runs'
import { RetryRunButton } from './RetryRun'
import { AnswerForm, ASK_OPERATOR, toolCallsQuery, ToolCallItem, type ToolCall } from './ToolCalls'

type Message = ApiMessage

interface PhaseOutput { run: Run; phase: PhaseRun }

export function ChatPanel({ streamId, poll }: { streamId: string; poll: number | false }) {
  const messages = useQuery({
    queryKey: ['messages', streamId],
    queryFn: () => allPages((cursor) => unwrap(api.GET('/api/chat/streams/{streamId}/messages', { params: { path: { streamId }, query: { limit: 100, ...(cursor ? { cursor } : {}) } } }))),
    refetchInterval: poll,
  })
  // A phase's output is a message: the runs say which, so the decision can sit on it.
  const runs = useRuns(streamId, poll)
  const outputs = new Map<string, PhaseOutput>()
  for (const run of runs.data ?? []) for (const phase of run.phases) if (phase.output) outputs.set(phase.output.messageId, { run, phase })
  // Tool calls in the flow: those of the unfinished runs and of the latest few, placed by when they started.
  const recent = (runs.data ?? []).filter((run, i, all) => !FINISHED.includes(run.status) || i >= all.length - 5)
  const calls = useQueries({ queries: recent.map((run) => toolCallsQuery(run)) })
  type Entry = { at: string; key: string; message?: Message; call?: { call: ToolCall; run: Run; phase: PhaseRun }; failed?: PhaseOutput }
  const callEntries: Entry[] = []
  // A phase that failed without an answer shows where its answer would have been, at its finishedAt.
  for (const run of runs.data ?? []) {
    for (const phase of run.phases) {
      if (phase.status === 'failed' && !phase.output && phase.finishedAt && phase.agentId !== NIL_AGENT) callEntries.push({ at: phase.finishedAt, key: `failed-${phase.id}`, failed: { run, phase } })
    }
  }
  recent.forEach((run, i) => {
    for (const call of calls[i]?.data ?? []) {
      const phase = run.phases.find((p) => p.id === call.phaseRunId)
      if (phase) callEntries.push({ at: call.startedAt, key: `call-${call.id}`, call: { call, run, phase } })
    }
  })
  callEntries.sort((a, b) => a.at.localeCompare(b.at))
  // Messages keep the API's order; each call goes after the messages written before it.
  const entries: Entry[] = []
  for (const message of (messages.data as Message[] | undefined) ?? []) {
    while (callEntries.length > 0 && callEntries[0]!.at < message.createdAt) entries.push(callEntries.shift()!)
    entries.push({ at: message.createdAt, key: message.id, message })
  }
  entries.push(...callEntries)
  return (
    <>
      <h2 className="sr-only">Chat</h2>
      {messages.isPending ? <Loading what="messages" /> : <ErrorMessage error={messages.error} onRetry={() => void messages.refetch()} />}
      {messages.data?.length === 0 && entries.length === 0 ? <Empty title="No messages yet.">Write the first one below; agents answer here when a run reaches them.</Empty> : null}
      <ol className="messages" aria-label="Messages" aria-live="polite">
        {entries.map((entry) => entry.message
          ? <MessageItem key={entry.key} message={entry.message} output={outputs.get(entry.message.id)} />
          : entry.failed ? <FailedAnswer key={entry.key} {...entry.failed} />
          : <ToolCallEntry key={entry.key} {...entry.call!} />)}
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
      <div className="actions spread"><span className="muted small"><kbd>Ctrl</kbd> + <kbd>Enter</kbd> sends</span><button type="button" onClick={submit} disabled={send.isPending}>Send</button></div>
      {send.error && !field.message ? <ErrorMessage error={send.error} /> : null}
    </div>
  )
}

/** A person seen in the chat: "You", else their short id (the API gives no directory of people). */
function personLabel(authorId: string, mine: boolean, handle: string | undefined): AgentLabel {
  return { id: authorId, name: mine ? 'You' : `Person ${shortId(authorId)}`, hint: null, avatarAssetId: null, known: true, initialsOf: mine ? handle : 'P' }
}

function MessageItem({ message, output }: { message: Message; output: PhaseOutput | undefined }) {
  const { me } = useAuth()
  const agentLabel = useAgentLabels()
  const [editing, setEditing] = useState(false)
  const [history, setHistory] = useState(false)
  const mine = me?.principalId === message.authorId
  const agent = message.authorType === 'agent'
  const author = agent ? agentLabel(message.authorId) : personLabel(message.authorId, mine, me?.handle)
  // Streaming answers (docs/agents-and-vendors.md): "streaming" while the agent writes, "failed" when its attempt failed.
  const status = (message as { status?: string }).status ?? 'complete'
  const streaming = status === 'streaming'
  const live = useLiveText(message.id)
  useEffect(() => {
    if (!streaming) forgetLiveText(message.id)
  }, [streaming, message.id])
  const text = streaming && live !== undefined && live.length >= message.text.length ? live : message.text
  return (
    <li className={`${agent ? 'message agent' : 'message'}${streaming ? ' streaming' : ''}`} aria-busy={streaming || undefined}>
      <Avatar label={author} />
      <div className="body">
        <div className="meta">
          <strong><AgentName label={author} avatar={false} /></strong>
          {agent ? <Badge tone="agent">agent</Badge> : null}
          {output ? <span className="muted">output of {output.phase.phaseName} ({output.run.triggerName})</span> : null}
          <RelativeTime iso={message.createdAt} />
          {message.editedAt ? <span className="muted">(edited, revision {message.revision})</span> : null}
          {streaming ? <StatusBadge status="streaming" /> : null}
          {status === 'failed' ? <Badge tone="danger">could not answer</Badge> : null}
        </div>
        {editing ? <EditForm message={message} onDone={() => setEditing(false)} />
          : streaming ? <div className="streaming-text">{text}<span className="cursor" aria-hidden="true" /></div>
          : <RichText content={message.content as Content} me={me?.handle} />}
        {output ? <InlineDecision {...output} /> : null}
        {output?.phase.status === 'failed' ? (
          <><p className="error">{author.name} could not answer: {output.phase.error?.detail ?? 'the phase failed'}</p><div className="actions"><RetryRunButton run={output.run} /></div></>
        ) : null}
        <div className="actions">
          {!editing && !streaming && canActAs(me, message.authorId) && !agent ? (
            <button type="button" className="ghost small" onClick={() => setEditing(true)}>Edit</button>
          ) : null}
          {message.revision > 1 ? (
            <button type="button" className="ghost small" aria-expanded={history} onClick={() => setHistory(!history)}>Earlier versions</button>
          ) : null}
        </div>
        {history ? <Revisions id={message.id} revision={message.revision} /> : null}
      </div>
    </li>
  )
}

const NIL_AGENT = '00000000-0000-0000-0000-000000000000'

/** Where a failed phase's answer would have been: the agent, "could not answer", the problem's detail, Retry run. */
function FailedAnswer({ run, phase }: PhaseOutput) {
  const agent = useAgentLabels()(phase.agentId)
  return (
    <li className="message agent failed-answer">
      <Avatar label={agent} />
      <div className="body">
        <div className="meta">
          <strong><AgentName label={agent} avatar={false} /></strong>
          <Badge tone="agent">agent</Badge>
          <Badge tone="danger">could not answer</Badge>
          <span className="muted">in {phase.phaseName} ({run.triggerName})</span>
          <RelativeTime iso={phase.finishedAt!} />
        </div>
        <p className="error">{agent.name} could not answer: {phase.error?.detail ?? phase.error?.title ?? 'the phase failed'}</p>
        <div className="actions"><RetryRunButton run={run} /></div>
      </div>
    </li>
  )
}

/** A tool call in the chat's flow: the agent that made it, the call, and Approve / Deny or the answer form. */
function ToolCallEntry({ call, run, phase }: { call: ToolCall; run: Run; phase: PhaseRun }) {
  const { me } = useAuth()
  const agent = useAgentLabels()(phase.agentId)
  const asks = call.name === ASK_OPERATOR && call.finishedAt === null && (phase.status as string) === 'awaiting_input'
  return (
    <li className="message agent tool-entry">
      <Avatar label={agent} />
      <div className="body">
        <div className="meta">
          <strong><AgentName label={agent} avatar={false} /></strong>
          <Badge tone="agent">agent</Badge>
          <span className="muted">{call.name === ASK_OPERATOR ? 'asks' : 'calls a tool'} in {phase.phaseName} ({run.triggerName})</span>
        </div>
        <ol className="tool-calls"><ToolCallItem run={run} phase={phase} call={call} /></ol>
        {asks && inPool(phase, me) ? <AnswerForm runId={run.id} streamId={run.streamId} phaseRunId={phase.id} /> : null}
      </div>
    </li>
  )
}

/** On a gated phase's output: the decision buttons while it waits (for its pool), its history after. */
function InlineDecision({ run, phase }: PhaseOutput) {
  const { me } = useAuth()
  if (phase.autoAdvance && phase.decisions.length === 0) return null
  const waiting = phase.status === 'awaiting_decision'
  return (
    <section className={waiting ? 'inline-decision' : ''} aria-label={`Decision on ${phase.phaseName}`}>
      {waiting ? <p className="small"><StatusBadge status="awaiting_decision" /> {inPool(phase, me) ? 'Your decision is needed on this output.' : 'Waiting for a decision from the phase\'s operators.'}</p> : null}
      <DecisionHistory phase={phase} />
      {waiting && inPool(phase, me) ? <DecisionForm run={run} phase={phase} /> : null}
    </section>
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
      <div className="actions">
        <button type="button" onClick={submit} disabled={save.isPending}>Save</button>
        <button type="button" className="secondary" onClick={onDone}>Cancel</button>
      </div>
      {save.error && !field.message && !(save.error instanceof ApiError && save.error.status === 412) ? <ErrorMessage error={save.error} /> : null}
    </div>
  )
}

function Revisions({ id, revision }: { id: string; revision: number }) {
  const revisions = useQuery({
    queryKey: ['revisions', id, revision],
    queryFn: () => allPages((cursor) => unwrap(api.GET('/api/chat/messages/{id}/revisions', { params: { path: { id }, query: { limit: 100, ...(cursor ? { cursor } : {}) } } }))),
  })
  if (revisions.isPending) return <Loading what="earlier versions" />
  if (revisions.error) return <ErrorMessage error={revisions.error} />
  return (
    <ol className="revisions" aria-label="Earlier versions">
      {revisions.data.map((revision) => (
        <li key={revision.revision}>
          <span className="muted">Revision {revision.revision}, <RelativeTime iso={revision.createdAt} /></span>
          <RichText content={revision.content as Content} />
        </li>
      ))}
    </ol>
  )
}
