// Tandem's own tool name for a remote A2A agent's AUTH_REQUIRED (remote-waits.ts): a call awaiting an operator's
// approval, never made by a tool host. A leaf, so the engine may import it.
/** The tool-name prefix of A2A_AUTHORIZE: reserved, no MCP server's tools are offered under it. */
export const A2A_PREFIX = 'a2a'
export const A2A_AUTHORIZE = `${A2A_PREFIX}.authorize`
