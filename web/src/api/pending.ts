// Shapes of RUNS.md's endpoints (identity, credentials, runs, events) until their branches put them in
// /openapi.json; then these become aliases of the generated schemas.
export interface Me { principalId: string; handle: string; role: 'admin' | 'member' | 'agent'; workspaceId: string; agentId: string | null }

export interface Credential { id: string; name: string; hint: string; createdAt: string; updatedAt: string }

export interface Decision { decision: 'approve' | 'revise' | 'reject'; note: string | null; principalId: string; handle: string; at: string }
export interface PhaseRun {
  id: string; phaseId: string; index: number; phaseName: string; agentId: string; goal: string; instructions: string
  autoAdvance: boolean; operatorPool: string[]
  status: 'pending' | 'running' | 'awaiting_decision' | 'succeeded' | 'failed' | 'canceled'
  attempts: number; output: { messageId: string; text: string } | null; error: { type?: string; detail?: string } | null
  decisions: Decision[]; startedAt: string | null; finishedAt: string | null
}
export interface Run {
  id: string; streamId: string; cycleId: string; triggerName: string
  status: 'queued' | 'running' | 'waiting' | 'succeeded' | 'failed' | 'rejected' | 'canceled'
  input: unknown; createdBy: string; createdAt: string; startedAt: string | null; finishedAt: string | null
  error: { type?: string; detail?: string } | null; phases: PhaseRun[]
}
export interface Page<T> { data: T[]; nextCursor: string | null }
