// TypeScript for the tests and the processes they start, loaded in the process's own thread: relative `.js`
// imports resolve to the `.ts` source beside them (the compiled layout's names, as tsc wants them written), and each
// `.ts` file is turned into JavaScript by Node's own type stripping, kept in node_modules/.cache/tandem-ts by the
// hash of its text, so a file is stripped once per change, not once per process. A test run starts a few hundred
// processes; tsx's loader, which runs its hooks in a second thread and starts esbuild, cost each about a second
// more of CPU than this one. Needs module.registerHooks and module.stripTypeScriptTypes (Node 22.15+, 23.5+);
// see typescript-loader.mjs for the choice of loader.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { enableCompileCache, registerHooks, stripTypeScriptTypes } from 'node:module'
import { fileURLToPath } from 'node:url'

const cacheDir = fileURLToPath(new URL('../node_modules/.cache/tandem-ts/', import.meta.url))
mkdirSync(cacheDir, { recursive: true })
// V8's code for every module this process compiles, kept on disk by Node (per Node version, each entry checked
// against the source it was made from) and used by the next process instead of compiling again: importing the
// app took 0.62 s of CPU instead of 0.77 s once the cache was warm. NODE_COMPILE_CACHE, when set, wins.
if (!process.env.NODE_COMPILE_CACHE) enableCompileCache(fileURLToPath(new URL('../node_modules/.cache/tandem-v8/', import.meta.url)))

const ours = (url) => url.startsWith('file:') && !url.includes('/node_modules/')

/**
 * The types blanked out in place, so every line and column stays where it was (tsconfig.json's erasableSyntaxOnly
 * keeps the sources to what can be stripped). Node warns that the function is experimental: the warning is not
 * this process's business, so it is kept out of its output.
 */
function toJavaScript(source) {
  const emitWarning = process.emitWarning
  process.emitWarning = () => {}
  try {
    return stripTypeScriptTypes(source, { mode: 'strip' })
  } finally {
    process.emitWarning = emitWarning
  }
}

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier.endsWith('.js') && specifier.startsWith('.') && context.parentURL?.endsWith('.ts') && ours(context.parentURL)) {
      const typescript = new URL(`${specifier.slice(0, -3)}.ts`, context.parentURL)
      if (existsSync(typescript)) return nextResolve(typescript.href, context)
    }
    return nextResolve(specifier, context)
  },
  load(url, context, nextLoad) {
    if (!url.endsWith('.ts') || !ours(url)) return nextLoad(url, context)
    const source = readFileSync(fileURLToPath(url), 'utf8')
    const cached = `${cacheDir}${createHash('sha1').update(process.version).update('\0').update(source).digest('hex')}.js`
    let code
    try {
      code = readFileSync(cached, 'utf8')
    } catch {
      code = toJavaScript(source)
      // Several processes may strip the same file at once: each writes its own file and renames it into place.
      const scratch = `${cached}.${process.pid}.tmp`
      writeFileSync(scratch, code)
      renameSync(scratch, cached)
    }
    return { format: 'module', source: code, shortCircuit: true }
  },
})
