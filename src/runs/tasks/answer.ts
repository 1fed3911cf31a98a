// An agent's answer to a task, as POSTed to result.url or returned by a webhook: `{ output: { text } }`,
// `{ output: { content } }` or `{ error: { detail } }`. One check for both ways in.
import type { ErrorObject } from 'ajv'
import { fieldErrors, type FieldError } from '../../http/problem.js'
import { validatorCompiler } from '../../http/validation.js'
import { MAX_TEXT_LENGTH } from '../../chat/schemas.js'
import { textLength } from '../../chat/richtext.js'
import type { AgentOutput, Usage } from '../adapters/adapter.js'
import { TaskResultBody } from '../schemas.js'

export type Answer = { kind: 'output'; output: AgentOutput; usage: Usage | null } | { kind: 'error'; detail: string } | { kind: 'invalid'; errors: FieldError[] }

const validate = validatorCompiler({ schema: TaskResultBody, httpPart: 'body', method: 'POST', url: '/api/tasks/:taskId/result' }) as ((value: unknown) => boolean) & {
  errors?: ErrorObject[] | null
}

/** The rules beyond the schema: exactly one of `output`/`error`, and of `text`/`content`; content's text length. */
export function answerProblems(body: TaskResultBody): FieldError[] {
  if ((body.output === undefined) === (body.error === undefined)) return [{ pointer: '/output', detail: 'send exactly one of output and error' }]
  if (body.output) {
    const { text, content } = body.output
    if ((text === undefined) === (content === undefined)) return [{ pointer: '/output/text', detail: 'send exactly one of output.text and output.content' }]
    if (content && textLength(content) > MAX_TEXT_LENGTH) return [{ pointer: '/output/content', detail: `must hold at most ${MAX_TEXT_LENGTH} characters of text in all blocks together` }]
  }
  return []
}

export function readAnswer(body: unknown): Answer {
  if (!validate(body)) return { kind: 'invalid', errors: fieldErrors(validate.errors ?? [], 'body') }
  const answer = body as TaskResultBody
  const errors = answerProblems(answer)
  if (errors.length > 0) return { kind: 'invalid', errors }
  if (answer.error) return { kind: 'error', detail: answer.error.detail }
  const { text, content } = answer.output!
  return { kind: 'output', output: content ? { content } : { text: text as string }, usage: answer.usage ?? null }
}
