// trigger / description: "Change the trigger to when an invoice is overdue", "Trigger it when …",
// "Make it manual", "Describe it as …".
import { triggerFromPhrase } from '../steps.js'
import { setAutoAdvance } from './gate.js'
import { unquote, type Handler } from './editor.js'

export const TRIGGER: Handler[] = [
  [/^(?:change|set|update|make)\s+the\s+trigger\s+(?:to|as)\s+(.+)$/i, (e, m) => {
    e.triggerName = triggerFromPhrase(m[1] as string).name
  }],
  [/^(?:trigger|run|start)\s+(?:it|the cycle|this|this cycle)\s+((?:when|whenever|each time|every|once|on)\s+.+)$/i, (e, m) => {
    e.triggerName = triggerFromPhrase(m[1] as string).name
  }],
  // "Make it manual": the phase the previous instruction touched, else the cycle's trigger.
  [/^make\s+(it|the cycle|this|this cycle)\s+manual$/i, (e, m) => {
    if (e.touched && /^(?:it|this)$/i.test(m[1] as string)) setAutoAdvance(e, e.touched, false)
    else e.triggerName = 'manual'
  }],
  [/^(?:describe\s+(?:it|the cycle|this|this cycle)\s+as|(?:change|set|update)\s+the\s+description\s+to)\s+(.+)$/i, (e, m) => {
    e.description = unquote(m[1] as string)
  }],
]
