// custom_token_only: nothing is sent; the agent claims its tasks with an agent key (POST /api/tasks/claim).
import type { Adapter } from './adapter.js'

export const customTokenOnly: Adapter = {
  providerType: 'custom_token_only',
  delivery: 'claim',
  unavailable: () => null,
  deliver: async () => ({ kind: 'accepted' }),
}
