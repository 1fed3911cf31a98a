// "Retry run" on a failed or canceled run not yet retried: POST /api/runs/{id}/retry with an Idempotency-Key
// (a double click starts one run), then the new run is shown expanded in the Runs tab.
import { useRef } from 'react'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api, unwrap, type Run } from '../api/client'
import { ErrorMessage } from '../ui'

export const mayRetry = (run: Pick<Run, 'status'> & { retriedBy?: string | null }) => (run.status === 'failed' || run.status === 'canceled') && !run.retriedBy

export function RetryRunButton({ run, onRetried, className = 'secondary small' }: { run: Run; onRetried?: (runId: string) => void; className?: string }) {
  const queryClient = useQueryClient()
  const key = useRef(crypto.randomUUID())
  const retry = useMutation({
    mutationFn: () => unwrap(api.POST('/api/runs/{runId}/retry', { params: { path: { runId: run.id }, header: { 'idempotency-key': key.current } } })),
    onSuccess: (retried) => onRetried?.(retried.id),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['runs', run.streamId] }),
  })
  if (!mayRetry(run)) return null
  return (
    <>
      <button type="button" className={className} onClick={() => retry.mutate()} disabled={retry.isPending}>Retry run</button>
      <ErrorMessage error={retry.error} />
    </>
  )
}
