// The MCP server's resources (JSON, each the body of a tool): the caller's inbox, and the templates of a run and of
// a stream's latest messages. resourceOf reads a URI into the tool and arguments that answer it.
const UUID = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}'

export const INBOX_URI = 'tandem://inbox'
export const runUri = (runId: string) => `tandem://runs/${runId}`
export const messagesUri = (streamId: string) => `tandem://streams/${streamId}/messages`

export const RESOURCES = [
  { uri: INBOX_URI, name: 'inbox', title: 'My inbox', description: 'What waits for you (list_inbox, the first 100 items).', mimeType: 'application/json' },
]

export const RESOURCE_TEMPLATES = [
  { uriTemplate: 'tandem://runs/{runId}', name: 'run', title: 'A run', description: 'A run, as get_run reads it.', mimeType: 'application/json' },
  { uriTemplate: 'tandem://streams/{streamId}/messages', name: 'messages', title: 'A stream\'s messages', description: 'The stream\'s latest messages, oldest first (read_messages).', mimeType: 'application/json' },
]

const RUN = new RegExp(`^tandem://runs/(${UUID})$`)
const MESSAGES = new RegExp(`^tandem://streams/(${UUID})/messages$`)

export function resourceOf(uri: string): { tool: string; args: Record<string, unknown> } | null {
  if (uri === INBOX_URI) return { tool: 'list_inbox', args: { limit: 100 } }
  const run = RUN.exec(uri)
  if (run) return { tool: 'get_run', args: { runId: run[1]!.toLowerCase() } }
  const messages = MESSAGES.exec(uri)
  if (messages) return { tool: 'read_messages', args: { streamId: messages[1]!.toLowerCase() } }
  return null
}

/** The URI as subscriptions keep it and notifications name it (ids in lower case). */
export function canonicalUri(uri: string): string {
  const resource = resourceOf(uri)
  if (!resource || resource.tool === 'list_inbox') return uri
  return resource.tool === 'get_run' ? runUri(String(resource.args.runId)) : messagesUri(String(resource.args.streamId))
}
