// Provider types have one list, the adapter registry's (src/runs/adapters/index.ts). The agents' schema and the
// OpenAPI document take theirs from it, and authMode's rules are keyed by it (a missing or extra key does not
// compile); this test fails if any of them drifts from the registry.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { adapterFor } from '../../../src/runs/adapters/index.js'
import { PROVIDER_TYPES } from '../../../src/runs/adapters/provider-types.js'
import { AUTH_MODES, ProviderType } from '../../../src/agents/schemas.js'
import { authModeProblem } from '../../../src/runs/adapters/auth-mode.js'

describe('provider types', () => {
  it('every listed type has its adapter, and the list is the agents schema enum', () => {
    assert.ok(PROVIDER_TYPES.length > 0)
    for (const type of PROVIDER_TYPES) assert.equal(adapterFor(type)?.providerType, type)
    assert.deepEqual((ProviderType as { enum?: unknown }).enum, PROVIDER_TYPES)
    assert.equal(adapterFor('no_such_provider'), undefined)
  })

  it('every type has authMode rules: its default mode with a credential works, and some mode is refused', () => {
    for (const providerType of PROVIDER_TYPES) {
      const fields = { providerType, authMode: null, hasCredential: true }
      assert.equal(authModeProblem(fields), null, providerType)
      const refused = AUTH_MODES.filter((mode) => authModeProblem({ ...fields, authMode: mode }) !== null)
      assert.ok(refused.length > 0, `${providerType} has no authMode rules`)
    }
  })
})
