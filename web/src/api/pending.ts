// Shapes of RUNS.md's endpoints (identity, credentials) until their branches put them in
// /openapi.json; then these become aliases of the generated schemas.
export interface Me { principalId: string; handle: string; role: 'admin' | 'member' | 'agent'; workspaceId: string; agentId: string | null }

export interface Credential { id: string; name: string; hint: string; createdAt: string; updatedAt: string }

export interface Page<T> { data: T[]; nextCursor: string | null }
