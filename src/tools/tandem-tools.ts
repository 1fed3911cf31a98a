// The tools Tandem itself offers an agent (docs/tools-and-approvals.md, "Tools"): their names, descriptions and input schemas.
// What they do belongs to the run engine, which holds the stream and the phase.
import type { ToolDefinition } from './definitions.js'
import { ASK_OPERATOR } from '../waits/kinds.js'
import { MAX_POSTED_TEXT_LENGTH, MAX_QUESTION_LENGTH, MAX_READ_MESSAGES } from './limits.js'

export const TANDEM_TOOLS: readonly ToolDefinition[] = [
  {
    name: 'tandem.read_messages',
    description: 'Reads the latest messages of the stream this task belongs to, oldest first, as text.',
    inputSchema: { type: 'object', properties: { limit: { type: 'integer', minimum: 1, maximum: MAX_READ_MESSAGES, description: `how many messages (1 to ${MAX_READ_MESSAGES}; default 20)` } }, additionalProperties: false },
    source: { kind: 'tandem' },
  },
  {
    name: 'tandem.post_message',
    description: 'Posts an interim message in the stream as the agent (progress, a partial result); the final answer is still the task\'s answer.',
    inputSchema: { type: 'object', properties: { text: { type: 'string', minLength: 1, maxLength: MAX_POSTED_TEXT_LENGTH } }, required: ['text'], additionalProperties: false },
    source: { kind: 'tandem' },
  },
  {
    name: ASK_OPERATOR,
    description: 'Asks the phase\'s operators a question and waits for one of them to answer; the answer is the result.',
    inputSchema: { type: 'object', properties: { question: { type: 'string', minLength: 1, maxLength: MAX_QUESTION_LENGTH } }, required: ['question'], additionalProperties: false },
    source: { kind: 'tandem' },
  },
]
