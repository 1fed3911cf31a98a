// How a process of the test suite loads TypeScript: Node's own type stripping through in-thread hooks
// (ts-hooks.mjs) where the Node line has them (22.15+, 23.5+, 24), else tsx. `npm test` starts its test
// processes with these arguments, and the tests start their child servers and CLIs with them too.
import module from 'node:module'

const native = typeof module.registerHooks === 'function' && typeof module.stripTypeScriptTypes === 'function'

/** The node arguments that make a process load `.ts` files. */
export const TYPESCRIPT_LOADER = native
  ? ['--import', new URL('./ts-hooks.mjs', import.meta.url).href]
  : ['--import', 'tsx']
