import { build } from '../test/helpers.js'
for (const d of ['sqlite', 'postgres'] as const) for (let i = 0; i < 6; i++) { const t0 = performance.now(); const c0 = process.cpuUsage(); const app = await build(d); const c = process.cpuUsage(c0); console.log(d, 'build', (performance.now()-t0).toFixed(0), 'cpu', ((c.user+c.system)/1000).toFixed(0)); await app.close() }
