// The model-backed engine: Claude, Mistral or any OpenAI-compatible server through the Vercel AI SDK,
// with structured output. Whatever the model answers goes through repairDraft, like every draft.
import type { LanguageModel } from 'ai'
import { aiSdk, anthropicProvider, mistralProvider, openAiCompatibleProvider } from '../runs/adapters/ai-sdk-modules.js'
import Type from 'typebox'
import type { DrafterConfig } from '../config.js'
import { AppError } from '../http/problem.js'
import { NIL_UUID } from '../http/schemas.js'
import { repairDraft, UnusableDraftError } from './repair.js'
import type { Drafter, DraftRequest } from './types.js'

// What the model is asked for: the cycle, with `id` null for a new phase.
const ModelDraft = Type.Object({
  triggerName: Type.String({ description: 'kebab-case event slug, or "manual"' }),
  description: Type.String({ description: 'one sentence summarising the cycle' }),
  phasesTemplate: Type.Array(
    Type.Object({
      id: Type.Union([Type.String(), Type.Null()], { description: 'the id of a phase kept from the current cycle, or null for a new phase' }),
      agentId: Type.String({ description: `the id of one of the listed agents, or ${NIL_UUID} when none fits` }),
      phaseName: Type.String({ description: 'short title, at most 60 characters' }),
      goal: Type.String(),
      instructions: Type.String(),
      autoAdvance: Type.Boolean({ description: 'false when an operator must approve before the next phase' }),
      operatorPool: Type.Array(Type.String(), { description: 'operator handles without @' }),
    }),
  ),
})

const SYSTEM = `You draft cycles: ordered workflows of phases, each done by one AI agent, for a team of agents and human operators.
Rules:
- One phase per step of work, in order. A leading "when/whenever/each time/every/once/on …" clause is the trigger: triggerName is its event as a lower-case kebab-case slug without determiners ("When a support ticket arrives" → "support-ticket-arrives"); with no such clause it is "manual".
- Assign each phase to the listed agent that the step names, else the one whose name, instructions and tools fit best; when none fits, use ${NIL_UUID}.
- Every @handle in a step goes into that phase's operatorPool (without the @). A step that mentions an operator or asks for approval, sign-off, confirmation or to wait for someone has autoAdvance false; others true. A step done by an operator ("@lee reviews it") is not a phase: it adds the operator to the previous phase and sets that phase's autoAdvance to false.
- phaseName is the step's verb and object ("Draft reply"); goal is the step's outcome in a few words, its object and past participle ("Reply drafted"), never "… done" and never the agent's name; instructions are the step's own words without the agent's name.
- In refine mode, a phase may be named by a word of its name or its verb's noun ("the draft" is "Draft reply"); when two phases fit equally, change neither and say so in a warning. A new phase "handled by/assigned to/done by" an agent goes to that agent, before or after or between the phases its placement clause names.
- In refine mode, apply the instructions to the current cycle and keep every phase you do not change exactly as it is, with its id. New phases have id null.`

// What of the agents goes to the model: each agent cut to these sizes, and agents (best candidates first)
// only while the whole list stays within AGENTS_BUDGET characters — a 31-byte prompt must not send megabytes.
export const AGENTS_BUDGET = 32000
const MAX_AGENT_INSTRUCTIONS = 1000
const MAX_AGENT_TOOLS = 20
const MAX_AGENT_TOOL = 80

function agentsForModel(request: DraftRequest): string {
  const listed: string[] = []
  let size = 2
  for (const a of request.agents) {
    const entry = JSON.stringify({
      id: a.id,
      name: a.name.slice(0, 120),
      instructions: a.instructions === null ? null : a.instructions.slice(0, MAX_AGENT_INSTRUCTIONS),
      tools: a.tools.slice(0, MAX_AGENT_TOOLS).map((t) => t.slice(0, MAX_AGENT_TOOL)),
    })
    if (size + entry.length + 1 > AGENTS_BUDGET) break
    listed.push(entry)
    size += entry.length + 1
  }
  const omitted = request.agents.length - listed.length
  return `[${listed.join(',')}]${omitted > 0 ? ` (${omitted} less likely agents omitted)` : ''}`
}

function userPrompt(request: DraftRequest): string {
  const parts = [`Mode: ${request.mode}`, `Agents: ${agentsForModel(request)}`]
  if (request.current) parts.push(`Current cycle: ${JSON.stringify(request.current)}`)
  parts.push(`${request.mode === 'refine' ? 'Instructions' : 'Prompt'}:\n${request.prompt}`)
  return parts.join('\n\n')
}

export interface ModelSettings {
  timeoutMs: number
  env: NodeJS.ProcessEnv
}

async function languageModel(config: Exclude<DrafterConfig, { kind: 'builtin' }>, env: NodeJS.ProcessEnv): Promise<LanguageModel> {
  switch (config.kind) {
    case 'anthropic':
      return (await anthropicProvider())({ apiKey: env.ANTHROPIC_API_KEY, ...(env.ANTHROPIC_BASE_URL ? { baseURL: env.ANTHROPIC_BASE_URL } : {}) })(config.model)
    case 'mistral':
      return (await mistralProvider())({ apiKey: env.MISTRAL_API_KEY, ...(env.MISTRAL_BASE_URL ? { baseURL: env.MISTRAL_BASE_URL } : {}) })(config.model)
    case 'openai-compatible':
      return (await openAiCompatibleProvider())({
        name: 'openai-compatible',
        baseURL: config.baseURL,
        apiKey: env.OPENAI_COMPATIBLE_API_KEY,
        supportsStructuredOutputs: true,
      }).chatModel(config.model)
  }
}

export function createModelDrafter(config: Exclude<DrafterConfig, { kind: 'builtin' }>, settings: ModelSettings): Drafter {
  // The SDK loads with the first draft; the model is made once.
  let model: Promise<LanguageModel> | undefined
  const name = `${config.kind}:${config.model}`
  return {
    name,
    async draft(request) {
      // The SDK's first load is not the provider's time.
      const { APICallError, generateText, jsonSchema, NoObjectGeneratedError, Output } = await aiSdk()
      model ??= languageModel(config, settings.env)
      const ready = await model
      const signal = AbortSignal.timeout(settings.timeoutMs)
      let answer: unknown
      try {
        const result = await generateText({
          model: ready,
          system: SYSTEM,
          prompt: userPrompt(request),
          output: Output.object({ schema: jsonSchema(ModelDraft) }),
          temperature: 0,
          // No silent retries: a failing provider is a prompt 502 and the client decides whether to try again.
          maxRetries: 0,
          abortSignal: signal,
        })
        answer = result.output
      } catch (error) {
        if (signal.aborted) throw new AppError('gateway-timeout', `The model (${name}) did not answer within ${settings.timeoutMs} ms.`)
        if (NoObjectGeneratedError.isInstance(error)) throw new AppError('bad-gateway', `The model (${name}) did not answer with a cycle.`)
        if (APICallError.isInstance(error)) {
          throw new AppError('bad-gateway', `The model provider (${name}) answered with an error${error.statusCode ? ` (status ${error.statusCode})` : ''}.`)
        }
        throw error
      }
      try {
        return repairDraft(answer, request)
      } catch (error) {
        if (error instanceof UnusableDraftError) throw new AppError('bad-gateway', `The model's draft could not be repaired: ${error.message}.`)
        throw error
      }
    },
  }
}
