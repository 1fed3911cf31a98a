// `npm run bench:security`: CPU time of the hardening on the request path — the Markdown rendering of long
// white-space runs (linear: cost per character stays flat from 4 000 to 40 000), the scan for numbers that
// JSON.parse would change (on a typical body it is one regular-expression test; on a body full of numbers a
// linear scan), and the local-mode Host/proxy check.
import { renderMarkdown } from '../src/chat/richtext.js'
import type { Content } from '../src/chat/schemas.js'
import { inexactNumbers } from '../src/http/json-numbers.js'
import { refuseInLocalMode } from '../src/principals/auth.js'

function cpuMicros(run: () => unknown, iterations: number): number {
  for (let i = 0; i < Math.max(3, iterations / 10); i++) run()
  const start = process.cpuUsage()
  for (let i = 0; i < iterations; i++) run()
  const used = process.cpuUsage(start)
  return (used.user + used.system) / iterations
}

const paragraph = (text: string, style = {}): Content => ({ blocks: [{ type: 'rich_text', elements: [{ type: 'paragraph', children: [{ type: 'text', text, style }] }] }] })

console.log('Markdown rendering of one run "a" + white space + "b" (bold)')
console.log('| white space | 4 000 characters | 40 000 characters | per character (40 000) |')
console.log('|---|---|---|---|')
for (const [label, space] of [['tab', '\t'], ['space', ' '], ['newline', '\n'], ['U+3000', '\u3000'], ['U+FEFF', '\ufeff']] as const) {
  const small = cpuMicros(() => renderMarkdown(paragraph(`a${space.repeat(3998)}b`, { bold: true })), 200)
  const large = cpuMicros(() => renderMarkdown(paragraph(`a${space.repeat(39998)}b`, { bold: true })), 40)
  console.log(`| ${label} | ${small.toFixed(0)} µs | ${large.toFixed(0)} µs | ${((large * 1000) / 40000).toFixed(1)} ns |`)
}

const agentBody = JSON.stringify({
  name: 'Research assistant',
  providerType: 'claude',
  instructions: 'Find sources, summarise them and cite each one. '.repeat(15),
  capabilities: { streaming: true, tools: ['web_search', 'fetch_url', 'summarise'] },
  config: { temperature: 0.2, maxTokens: 4096, retries: 3 },
})
const numbers = JSON.stringify({ name: 'n', config: { values: Array.from({ length: 100000 }, (_, i) => i * 1.5e-3) } })
console.log('\nScan for numbers JSON.parse would change')
console.log(`| body | bytes | CPU per body |`)
console.log('|---|---|---|')
console.log(`| typical agent (no exponent, no long digit run) | ${agentBody.length} | ${cpuMicros(() => inexactNumbers(agentBody), 100000).toFixed(2)} µs |`)
console.log(`| 100 000 numbers in config | ${numbers.length} | ${(cpuMicros(() => inexactNumbers(numbers), 20) / 1000).toFixed(1)} ms |`)

const headers = { host: 'localhost:3000', 'user-agent': 'curl/8.5.0', accept: '*/*', 'content-type': 'application/json', 'content-length': '42' }
console.log(`\nLocal-mode Host and proxy-header check: ${(cpuMicros(() => refuseInLocalMode(headers), 1000000) * 1000).toFixed(0)} ns per request`)
