// `npm run lint` runs this: the layering of src/ (docs/architecture.md "Layers"). Type-only imports are erased at
// run time and so do not count; a circle or an infrastructure file importing a feature at run time fails lint.
const INFRASTRUCTURE = '^src/(db|http|net|jobs|text|metrics|idempotency)/|^src/[^/]+\\.ts$'
const ENTRY_POINTS = '^src/(app|main|cli|startup|health|help|banner|task-list)\\.ts$'

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No circle among the value imports of src/: a module that needs its importer at run time belongs with it, or they share a third.',
      from: { path: '^src/' },
      to: { circular: true, dependencyTypesNot: ['type-only'], viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'infrastructure-imports-no-feature',
      severity: 'error',
      comment: 'The infrastructure (src/db, http, net, jobs, text, metrics, idempotency and the top-level files) imports no feature at run time: features register themselves with it.',
      from: { path: INFRASTRUCTURE, pathNot: ENTRY_POINTS },
      to: { path: '^src/', pathNot: `${INFRASTRUCTURE}`, dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: `${__dirname}/tsconfig.json` },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js'] },
  },
}
