// A real AdapterContext for adapter-level tests, as the engine builds it: the egress guard (opened to
// 127.0.0.0/8, as TANDEM_EGRESS_ALLOW does in tests; `allow: []` refuses the fakes) and a dispatch time-out.
import type { AdapterContext, AgentTarget, TaskPayload } from '../../../src/runs/adapters/adapter.js'
import { createEgressGuard, type EgressGuard } from '../../../src/net/egress.js'

// One guard per allow list, as the service keeps one per app (its connection pool is reused).
const guards = new Map<string, EgressGuard>()

export function adapterContext(timeoutMs = 5000, allow = ['127.0.0.0/8']): AdapterContext {
  const key = allow.join(',')
  const guard = guards.get(key) ?? createEgressGuard(allow)
  guards.set(key, guard)
  return {
    fetch: guard.fetch,
    request: guard.request,
    lookup: guard.lookup,
    signal: AbortSignal.timeout(timeoutMs),
    timeoutMs,
    traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  }
}

export const SECRET = 'sk-test-9f8e7d6c5b4a-secret'

export function agentTarget(providerType: string, endpointUrl: string, fields: Partial<AgentTarget> = {}): AgentTarget {
  return {
    id: '0193a5b4-0000-7000-8000-000000000001',
    name: 'Vendor agent',
    providerType,
    authMode: 'api_key',
    endpointUrl,
    config: {},
    instructions: 'You are the triage agent. Answer in one paragraph.',
    secret: SECRET,
    ...fields,
  }
}

export function taskPayload(fields: { feedback?: string | null; attempt?: number; instructions?: string | null } = {}): TaskPayload {
  return {
    task: { id: '0193a5b4-0000-7000-8000-0000000000aa', attempt: fields.attempt ?? 1 },
    run: { id: '0193a5b4-0000-7000-8000-0000000000bb', input: { ticket: 'T-42', priority: 'high' } },
    stream: { id: '0193a5b4-0000-7000-8000-0000000000cc', name: 'Support' },
    cycle: { id: '0193a5b4-0000-7000-8000-0000000000dd', triggerName: 'new-ticket', description: 'Handle a new ticket.' },
    phase: { id: '0193a5b4-0000-7000-8000-0000000000ee', index: 1, phaseName: 'Triage', goal: 'Classify the ticket.', instructions: 'Say bug or question.', feedback: fields.feedback ?? null },
    agent: { id: '0193a5b4-0000-7000-8000-000000000001', name: 'Vendor agent', instructions: fields.instructions === undefined ? 'You are the triage agent. Answer in one paragraph.' : fields.instructions, config: {} },
    previous: [{ phaseName: 'Intake', text: 'The customer cannot log in.' }],
    messages: [{ id: '0193a5b4-0000-7000-8000-0000000000ff', authorId: 'maria', authorType: 'principal', text: 'Please hurry, it is a big customer.', createdAt: '2026-11-22T10:00:00.000Z' }],
    result: { url: 'http://127.0.0.1:1/api/tasks/x/result', token: 'result-token' },
  }
}
