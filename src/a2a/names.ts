// Tandem's own tool name for a remote A2A agent's AUTH_REQUIRED (remote-waits.ts): a call awaiting an operator's
// approval, never made by a tool host. A leaf, so the engine may import it.
export const A2A_AUTHORIZE = 'a2a.authorize'
