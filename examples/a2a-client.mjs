// Calls an exposed Tandem cycle as an A2A agent with the official SDK's client (@a2a-js/sdk): reads its Agent Card,
// sends one message, and prints the task's state and status text, then each artifact's text. Usage:
//   node examples/a2a-client.mjs <card base URL, e.g. http://127.0.0.1:3000/a2a/cycles/<cycleId>/> "<text>" [apiKey]
// With TANDEM_AUTH=local a loopback caller needs no key (it acts as the local admin).
import { randomUUID } from 'node:crypto'
import { Role, TaskState } from '@a2a-js/sdk'
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client'

const [base, text, key] = process.argv.slice(2)
if (!base || !text) {
  console.error('usage: node examples/a2a-client.mjs <base URL of the cycle, with a trailing slash> "<text>" [apiKey]')
  process.exit(2)
}
// The key goes on every call: a Tandem endpoint answers 401 without one (the card itself is public).
const fetchImpl = (input, init = {}) => {
  const headers = new Headers(init.headers)
  if (key) headers.set('authorization', `Bearer ${key}`)
  return fetch(input, { ...init, headers })
}
const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
  transports: [new JsonRpcTransportFactory({ fetchImpl })],
  cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
}))
const client = await factory.createFromUrl(base)
const card = await client.getAgentCard()
console.log(`agent: ${card.name} (skill ${card.skills[0]?.name})`)
const task = await client.sendMessage({
  tenant: '',
  message: {
    messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, metadata: undefined, extensions: [], referenceTaskIds: [],
    parts: [{ content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: undefined }],
  },
  configuration: { acceptedOutputModes: ['text/plain'], taskPushNotificationConfig: undefined, returnImmediately: false },
  metadata: undefined,
})
const words = (parts) => parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('')
console.log(`task: ${TaskState[task.status.state]}${task.status.message ? ` - ${words(task.status.message.parts)}` : ''}`)
// Each artifact is one agent message of the run; its first line is enough here.
for (const artifact of task.artifacts) console.log(`artifact ${artifact.name}: ${words(artifact.parts).split("\n")[0]}`)
