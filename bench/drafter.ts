// `npm run bench:drafter`: CPU time of the builtin engine per draft, for a realistic 2 KB prompt and for
// prompts from 1 KB to 100 KB (to show that cost grows linearly: no quadratic regular expressions).
// Prompts beyond 100 steps are read whole but only their first 100 steps become phases (our bound).
import { readFileSync } from 'node:fs'
import { draftBuiltin } from '../src/cycles/drafter/builtin.js'
import { splitSteps, splitTrigger } from '../src/cycles/drafter/steps.js'
import { ADVERSARIAL } from '../test/cycles/fixtures/adversarial.js'

const examples = JSON.parse(readFileSync(new URL('../test/cycles/fixtures/examples.json', import.meta.url), 'utf8'))
const agents = examples.agents.map((a: { name: string; instructions: string; capabilities?: { tools?: string[] } }, i: number) => ({
  id: `01890a5d-ac96-774b-bcce-${String(i).padStart(12, '0')}`,
  name: a.name,
  instructions: a.instructions,
  tools: a.capabilities?.tools ?? [],
}))

const SENTENCES = [
  'When a support ticket arrives, first triage it, then draft a reply, and finally have @maria approve the reply before it is sent.',
  "Analyst pulls last week's sales numbers and builds a chart.",
  'Then Copywriter turns the findings into a short newsletter.',
  'Research the market for electric bikes, analyse the pricing data, and write a blog post about the findings.',
  'Translate the incoming document into French, then have Editor proofread the translation.',
  'Phone the lead to discuss their needs, then schedule a demo meeting in the sales calendar.',
  'Wait for @finance to confirm before archiving.',
]

function promptOf(bytes: number): string {
  let text = ''
  for (let i = 0; text.length < bytes; i++) text += `${SENTENCES[i % SENTENCES.length]} `
  return text.slice(0, bytes)
}

function cpuMicros(run: () => unknown, prompt: string): number {
  const warm = Math.max(3, Math.round(20000 / prompt.length))
  for (let i = 0; i < warm; i++) run()
  const iterations = Math.max(5, Math.round(2_000_000 / prompt.length))
  const start = process.cpuUsage()
  for (let i = 0; i < iterations; i++) run()
  const used = process.cpuUsage(start)
  return (used.user + used.system) / iterations
}

// Warm the JIT on every size before measuring any.
for (const bytes of [2000, 10000, 100000]) for (let i = 0; i < 2_000_000 / bytes; i++) draftBuiltin({ mode: 'generate', prompt: promptOf(bytes), agents })

const names = agents.map((a: { name: string }) => a.name.toLowerCase())
const rows = []
for (const bytes of [1000, 2000, 10000, 50000, 100000]) {
  const prompt = promptOf(bytes)
  const draft = cpuMicros(() => draftBuiltin({ mode: 'generate', prompt, agents }), prompt)
  const read = cpuMicros(() => splitSteps(splitTrigger(prompt).body, names), prompt)
  rows.push({
    prompt: `generate ${bytes / 1000} KB`,
    steps: splitSteps(splitTrigger(prompt).body, names).length,
    'draft CPU ms': +(draft / 1000).toFixed(3),
    'read steps CPU ms': +(read / 1000).toFixed(3),
    'read µs per KB': +(read / (bytes / 1000)).toFixed(1),
  })
}
const refinePrompt = 'Add a step after Draft reply to proofread the reply. Rename Triage to Intake. Move Send reply before Draft reply. Let Translator handle the first phase.'
const current = draftBuiltin({ mode: 'generate', prompt: promptOf(2000), agents }).draft
const refine = cpuMicros(() => draftBuiltin({ mode: 'refine', prompt: refinePrompt, current, agents }), refinePrompt)
rows.push({ prompt: 'refine: 4 instructions on 40 phases', steps: 4, 'draft CPU ms': +(refine / 1000).toFixed(3), 'read steps CPU ms': 0, 'read µs per KB': 0 })
let worst = { name: '', ms: 0 }
for (const [name, prompt] of Object.entries(ADVERSARIAL)) {
  for (const mode of ['generate', 'refine'] as const) {
    const micros = cpuMicros(() => draftBuiltin({ mode, prompt, current, agents }), prompt)
    if (micros / 1000 > worst.ms) worst = { name: `${mode} ${name}`, ms: micros / 1000 }
  }
}
console.table(rows)
console.log(`Slowest of ${Object.keys(ADVERSARIAL).length * 2} adversarial 100 KB drafts (test/cycles/adversarial.test.ts): ${worst.name}, ${worst.ms.toFixed(1)} ms CPU`)
console.log('Only the first 100 steps become phases (our bound); reading the steps touches every byte, so its cost per KB shows the scaling.')
