// Tool calls (docs/agents-and-vendors.md "Tools"): a run's calls (GET /api/runs/{runId}/tool-calls), shown under their phase in
// the runs' stepper and in the chat's flow; a call awaiting approval carries Approve / Deny for the phase's
// pool (POST …/tool-calls/{callId}/decision), and a phase awaiting input the agent's question with an Answer
// field (POST …/phases/{phaseRunId}/answer). Read with the untyped client until the service's schema has them.
import { useState } from 'react'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { ApiError, request, type PhaseRun, type Run } from '../api/client'
import { useAuth } from '../auth'
import { allPages } from '../pages'
import { Badge, ErrorMessage, formatDuration, RelativeTime, StatusBadge, useField } from '../ui'
import { inPool } from './Decide'

/** Where a person's decision came from (absent on the system's). */
export const VIA: Record<string, string> = { api: 'API', console: 'console', mcp: 'MCP', a2a: 'A2A' }

export interface ToolCall {
  id: string; runId: string; phaseRunId: string; attempt: number; name: string; input: unknown
  output: string | null; error: string | null; status: 'running' | 'awaiting_approval' | 'succeeded' | 'failed' | 'denied'
  approval: { required: true; decision: 'approve' | 'deny' | null; note: string | null; handle: string | null; at: string | null; via?: string } | null
  startedAt: string; finishedAt: string | null
}

export const ASK_OPERATOR = 'tandem.ask_operator'

/** A run's tool calls, oldest first; null where this Tandem has none (404 on the path: no tools yet). */
export function useToolCalls(run: Run) {
  return useQuery(toolCallsQuery(run))
}

export function toolCallsQuery(run: Run) {
  return {
    queryKey: ['tool-calls', run.streamId, run.id],
    queryFn: async () => {
      try {
        return await allPages((cursor) => request<{ data: ToolCall[]; nextCursor: string | null }>('GET', `/api/runs/${run.id}/tool-calls?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`))
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) return null
        throw error
      }
    },
    retry: false,
    // Unfinished runs change; the stream's tool_call.* events refresh these too (events.ts).
    refetchInterval: (query: { state: { data: ToolCall[] | null | undefined } }) => (query.state.data === null || ['succeeded', 'failed', 'rejected', 'canceled'].includes(run.status) ? false : 3000),
  }
}

/** The question of a phase awaiting input: the input of its open `tandem.ask_operator` call. */
export function questionOf(calls: ToolCall[] | null | undefined, phase: PhaseRun): ToolCall | undefined {
  return calls?.filter((c) => c.phaseRunId === phase.id && c.name === ASK_OPERATOR && c.finishedAt === null).at(-1)
}

function inputText(input: unknown): string {
  if (input && typeof input === 'object' && !Array.isArray(input) && Object.keys(input).length === 0) return ''
  return JSON.stringify(input)
}

const STATUS_TONE: Record<ToolCall['status'], Parameters<typeof Badge>[0]['tone']> = {
  running: 'info', awaiting_approval: 'warning', succeeded: 'success', failed: 'danger', denied: 'danger',
}
const STATUS_WORDS: Record<ToolCall['status'], string> = {
  running: 'running', awaiting_approval: 'awaiting approval', succeeded: 'done', failed: 'failed', denied: 'denied',
}

/** One call: its tool, input, status, output or error, approval; Approve / Deny while it waits, for the pool. */
export function ToolCallItem({ run, phase, call }: { run: Run; phase: PhaseRun; call: ToolCall }) {
  const { me } = useAuth()
  const input = inputText(call.input)
  const question = call.name === ASK_OPERATOR ? (call.input as { question?: string } | null)?.question : undefined
  return (
    <li className={`tool-call ${call.status}`} aria-label={`Tool call ${call.name}`}>
      <div className="row">
        <code className="tool-name">{call.name}</code>
        <span className={`badge plain tone-${STATUS_TONE[call.status]}`}>{STATUS_WORDS[call.status]}</span>
        {call.approval ? <Badge tone="neutral">needs approval</Badge> : null}
        {call.attempt > 1 ? <span className="muted small">attempt {call.attempt}</span> : null}
        <span className="muted small">
          <RelativeTime iso={call.startedAt} />
          {call.finishedAt ? ` · took ${formatDuration(new Date(call.finishedAt).getTime() - new Date(call.startedAt).getTime())}` : ''}
        </span>
      </div>
      {question ? <p className="question">“{question}”</p> : input ? <pre className="tool-io" aria-label="Input">{input}</pre> : null}
      {call.output !== null ? <pre className="tool-io" aria-label={question ? 'Answer' : 'Output'}>{call.output}</pre> : null}
      {call.error ? <p className="error">{call.error}</p> : null}
      {call.approval?.decision ? (
        <p className="small"><StatusBadge status={call.approval.decision === 'approve' ? 'approve' : 'reject'} /> @{call.approval.handle ?? 'someone'} {call.approval.decision === 'approve' ? 'approved' : 'denied'}{call.approval.note ? `: “${call.approval.note}”` : ''}{call.approval.via ? ` via ${VIA[call.approval.via]}` : ''}{call.approval.at ? <> · <RelativeTime iso={call.approval.at} /></> : null}</p>
      ) : null}
      {call.status === 'awaiting_approval' && inPool(phase, me) ? <ToolDecisionForm runId={run.id} streamId={run.streamId} callId={call.id} name={call.name} /> : null}
    </li>
  )
}

/** Approve / Deny a call awaiting approval, with an optional note (sent with either). */
export function ToolDecisionForm({ runId, streamId, callId, name, onDone }: { runId: string; streamId: string; callId: string; name: string; onDone?: () => void }) {
  const queryClient = useQueryClient()
  const [note, setNote] = useState('')
  const decide = useMutation({
    mutationFn: (decision: 'approve' | 'deny') => request('POST', `/api/runs/${runId}/tool-calls/${callId}/decision`, { decision, ...(note ? { note } : {}) }),
    onSuccess: () => {
      setNote('')
      onDone?.()
    },
    onSettled: () => {
      void queryClient.invalidateQueries({ queryKey: ['tool-calls', streamId] })
      void queryClient.invalidateQueries({ queryKey: ['runs', streamId] })
      void queryClient.invalidateQueries({ queryKey: ['inbox'] })
    },
  })
  const noteField = useField(decide.error, '/note')
  return (
    <div className="decide">
      <label htmlFor={noteField.input.id}>Note</label>
      <textarea {...noteField.input} rows={1} value={note} onChange={(e) => setNote(e.target.value)} placeholder={`Why (sent to the agent with Deny): ${name}`} />
      {noteField.message}
      <div className="actions">
        <button type="button" onClick={() => decide.mutate('approve')} disabled={decide.isPending}>Approve</button>
        <button type="button" className="danger" onClick={() => decide.mutate('deny')} disabled={decide.isPending}>Deny</button>
      </div>
      {decide.error && !noteField.message ? <ErrorMessage error={decide.error} /> : null}
    </div>
  )
}

/** The answer to an agent's question (tandem.ask_operator): textbox "Answer", button "Send answer". */
export function AnswerForm({ runId, streamId, phaseRunId, onDone }: { runId: string; streamId: string; phaseRunId: string; onDone?: () => void }) {
  const queryClient = useQueryClient()
  const [text, setText] = useState('')
  const answer = useMutation({
    mutationFn: () => request('POST', `/api/runs/${runId}/phases/${phaseRunId}/answer`, { text }),
    onSuccess: () => {
      setText('')
      onDone?.()
    },
    onSettled: () => {
      void queryClient.invalidateQueries({ queryKey: ['tool-calls', streamId] })
      void queryClient.invalidateQueries({ queryKey: ['runs', streamId] })
      void queryClient.invalidateQueries({ queryKey: ['inbox'] })
    },
  })
  const field = useField(answer.error, '/text')
  return (
    <form className="decide" onSubmit={(e) => { e.preventDefault(); if (text.trim() !== '') answer.mutate() }}>
      <label htmlFor={field.input.id}>Answer</label>
      <textarea {...field.input} rows={2} value={text} maxLength={20000} onChange={(e) => setText(e.target.value)} />
      {field.message}
      <div className="actions"><button type="submit" disabled={answer.isPending || text.trim() === ''}>Send answer</button></div>
      {answer.error && !field.message ? <ErrorMessage error={answer.error} /> : null}
    </form>
  )
}

/** A phase's calls in the stepper (and the question it waits on, with the answer form for its pool). */
export function PhaseToolCalls({ run, phase, calls }: { run: Run; phase: PhaseRun; calls: ToolCall[] | null | undefined }) {
  const { me } = useAuth()
  const mine = calls?.filter((c) => c.phaseRunId === phase.id) ?? []
  const waitsForAnswer = (phase.status as string) === 'awaiting_input'
  if (mine.length === 0 && !waitsForAnswer) return null
  return (
    <>
      {mine.length > 0 ? (
        <ol className="tool-calls" aria-label={`Tool calls of ${phase.phaseName}`}>
          {mine.map((call) => <ToolCallItem key={call.id} run={run} phase={phase} call={call} />)}
        </ol>
      ) : null}
      {waitsForAnswer && inPool(phase, me) ? <AnswerForm runId={run.id} streamId={run.streamId} phaseRunId={phase.id} /> : null}
    </>
  )
}
