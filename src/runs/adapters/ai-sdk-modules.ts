// The Vercel AI SDK and its vendor providers, loaded at the first model call rather than at start-up: they are a
// large share of a cold start's modules, and most processes (the CLI, every test that calls no model) never need
// them. Each loader is Node's module cache behind a promise, so later calls cost nothing.
import type * as Ai from 'ai'

let loaded: typeof Ai | undefined

/** The `ai` package, loaded once. */
export async function aiSdk(): Promise<typeof Ai> {
  loaded ??= await import('ai')
  return loaded
}

/** The `ai` package if a model call has loaded it: an error it threw can only come after that. */
export function aiSdkIfLoaded(): typeof Ai | undefined {
  return loaded
}

export const anthropicProvider = async () => (await import('@ai-sdk/anthropic')).createAnthropic
export const mistralProvider = async () => (await import('@ai-sdk/mistral')).createMistral
export const openAiCompatibleProvider = async () => (await import('@ai-sdk/openai-compatible')).createOpenAICompatible
