// The one prompt every model-backed adapter sends, built from the task payload. A budget (in characters,
// about four per token) keeps a long stream from overflowing a model's context: the task itself (goal,
// instructions, feedback) always comes first and whole up to its own share; then the run input, the earlier
// phases' outputs and the recent messages fill what is left, the newest first, and older ones are dropped.
import type { TaskPayload } from './adapter.js'

/** About 12 000 tokens: small enough for every model these adapters reach, large enough for a real task. */
export const DEFAULT_PROMPT_BUDGET = 48_000
const TRUNCATED = '… [truncated]'

export interface Prompt {
  /** The agent's own instructions (a system prompt where the vendor has one), or undefined. */
  system: string | undefined
  /** The task. */
  user: string
}

function clip(text: string, max: number): string {
  if (text.length <= max) return text
  if (max <= TRUNCATED.length) return ''
  return text.slice(0, max - TRUNCATED.length) + TRUNCATED
}

/** Takes items newest first while they fit in `budget`, clipping the one that does not; returns them oldest first. */
function newestThatFit(items: string[], budget: number): { kept: string[]; dropped: number } {
  const kept: string[] = []
  let left = budget
  for (let i = items.length - 1; i >= 0 && left > 0; i--) {
    const item = items[i] as string
    const cost = item.length + 2
    if (cost <= left) {
      kept.unshift(item)
      left -= cost
    } else {
      const clipped = clip(item, left - 2)
      if (clipped) kept.unshift(clipped)
      left = 0
    }
  }
  return { kept, dropped: items.length - kept.length }
}

export function buildPrompt(payload: TaskPayload, budget = DEFAULT_PROMPT_BUDGET): Prompt {
  const { phase, run, stream, cycle } = payload
  const system = payload.agent.instructions?.trim() ? clip(payload.agent.instructions, Math.floor(budget / 4)) : undefined
  let left = budget - (system?.length ?? 0)

  // The task: never dropped, each part clipped to a share so that context still fits beside it.
  const taskParts = [`# Task: ${phase.phaseName} (phase ${phase.index + 1} of cycle "${cycle.triggerName}" in stream "${stream.name}")`]
  if (cycle.description) taskParts.push(`Cycle: ${clip(cycle.description, 1000)}`)
  taskParts.push(`## Goal\n${clip(phase.goal, Math.floor(left / 6))}`)
  if (phase.instructions.trim()) taskParts.push(`## Instructions\n${clip(phase.instructions, Math.floor(left / 6))}`)
  if (phase.feedback) {
    taskParts.push(`## Operator feedback on your previous answer (attempt ${payload.task.attempt - 1})\nRevise your answer accordingly:\n${clip(phase.feedback, Math.floor(left / 6))}`)
  }
  const task = taskParts.join('\n\n')
  left -= task.length

  const sections: string[] = [task]
  const inputJson = JSON.stringify(run.input, null, 2)
  if (inputJson !== '{}' && left > 200) {
    const input = `# Run input\n${clip(inputJson, Math.floor(left / 3))}`
    sections.push(input)
    left -= input.length + 2
  }
  if (payload.previous.length > 0 && left > 200) {
    const items = payload.previous.map((p) => `## ${p.phaseName}\n${p.text}`)
    const { kept, dropped } = newestThatFit(items, Math.floor(left / 2))
    const head = `# Outputs of earlier phases${dropped ? ` (${dropped} older left out)` : ''}`
    const section = [head, ...kept].join('\n\n')
    sections.push(section)
    left -= section.length + 2
  }
  if (payload.messages.length > 0 && left > 200) {
    const items = payload.messages.map((m) => `[${m.createdAt}] ${m.authorType} ${m.authorId}: ${m.text}`)
    const { kept, dropped } = newestThatFit(items, left - 100)
    const section = [`# Recent messages in the stream, oldest first${dropped ? ` (${dropped} older left out)` : ''}`, ...kept].join('\n')
    sections.push(section)
  }
  return { system, user: sections.join('\n\n') }
}

/** For vendors with no system prompt of their own (a conversation, a coding agent): one text. */
export function promptAsText(prompt: Prompt): string {
  return prompt.system ? `# Your instructions\n${prompt.system}\n\n${prompt.user}` : prompt.user
}
