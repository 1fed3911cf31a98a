// How much of an agent's text is read for matching work to it: by the drafter's scorer (src/drafter/assign.ts)
// and by the agents' search index (src/agents/search.ts) alike, so that both score the same words.
// Only so much of an agent is read: a name, the start of its instructions, its first tools.
export const MAX_INDEXED_INSTRUCTIONS = 4000
export const MAX_INDEXED_TOOLS = 50
export const MAX_INDEXED_TOOL = 200
