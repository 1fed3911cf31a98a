// Where the drafter lives: src/drafter, its tokenizer in src/text; the agents import nothing of
// cycles or of the drafter, and tell the drafter of changes through the hook app.ts wires.
import { after, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { AgentIndex, indexCacheStats } from '../../src/drafter/assign.js'
import { build, dialects, send } from '../helpers.js'

const SRC = fileURLToPath(new URL('../../src/', import.meta.url))

/** Every source file under src/ and the files of src/ it imports (relative imports, .js read as .ts; `runtime`: not `import type`). */
function importGraph(runtime = false): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const entry of readdirSync(SRC, { recursive: true }).map(String)) {
    if (!entry.endsWith('.ts')) continue
    const text = readFileSync(join(SRC, entry), 'utf8')
    const targets = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\s+(type\s+)?[^'"]*?from\s+['"](\.{1,2}\/[^'"]+)['"]/g)]
      .filter((m) => !runtime || m[1] === undefined)
      .map((m) => relative(SRC, normalize(join(SRC, dirname(entry), (m[2] as string).replace(/\.js$/, '.ts')))))
    graph.set(entry, targets)
  }
  return graph
}

describe('the drafter\'s place in the code', () => {
  const graph = importGraph()

  it('agents import nothing from src/cycles or src/drafter', () => {
    const offending = [...graph].filter(([file]) => file.startsWith('agents/')).flatMap(([file, targets]) =>
      targets.filter((t) => t.startsWith('cycles/') || t.startsWith('drafter/')).map((t) => `${file} → ${t}`),
    )
    assert.deepEqual(offending, [])
  })

  it('src/text (the tokenizer) imports only itself', () => {
    const outside = [...graph].filter(([file]) => file.startsWith('text/')).flatMap(([file, targets]) => targets.filter((t) => !t.startsWith('text/')).map((t) => `${file} → ${t}`))
    assert.deepEqual(outside, [])
  })

  it('no import circle runs through agents, cycles, the drafter and text (type-only imports aside)', () => {
    const graph = importGraph(true)
    const inScope = (file: string) => /^(?:agents|cycles|drafter|text)\//.test(file)
    const state = new Map<string, 'open' | 'done'>()
    const circles: string[] = []
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === 'done') return
      if (state.get(file) === 'open') return void circles.push([...path.slice(path.indexOf(file)), file].join(' → '))
      state.set(file, 'open')
      for (const target of graph.get(file) ?? []) if (inScope(target)) visit(target, [...path, file])
      state.set(file, 'done')
    }
    for (const file of graph.keys()) if (inScope(file)) visit(file, [])
    assert.deepEqual(circles, [])
  })
})

for (const dialect of dialects()) {
  describe(`agents tell the drafter of changes (${dialect})`, async () => {
    const app = await build(dialect)
    after(() => app.close())

    it('a changed or deleted agent leaves the drafter\'s index', async () => {
      const created = await send(app, 'POST', '/api/agents', { name: 'Hook Probe', instructions: 'Probe hooks.' })
      assert.equal(created.statusCode, 201)
      const { id } = created.json() as { id: string }
      const cached = () => {
        const before = indexCacheStats().agents
        new AgentIndex([{ id, name: 'Hook Probe', instructions: 'Probe hooks.', tools: [] }])
        return indexCacheStats().agents - before
      }
      cached()
      assert.equal(cached(), 0, 'indexed once, then kept')
      assert.equal((await send(app, 'PATCH', `/api/agents/${id}`, { instructions: 'Probe hooks twice.' })).statusCode, 200)
      assert.equal(cached(), 1, 'the change dropped it: indexing it again adds it')
      assert.equal((await send(app, 'DELETE', `/api/agents/${id}`)).statusCode, 204)
      assert.equal(cached(), 1, 'the deletion dropped it')
    })
  })
}
