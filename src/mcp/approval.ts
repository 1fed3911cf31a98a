// Which approval a tool gets from its server's globs. `*` matches any run of characters (none included); every
// other character matches itself. The most specific matching glob decides, so the order the globs were written
// in never matters: the one with the most characters other than `*` wins (an exact name beats any glob), and
// between equally specific globs that disagree, "always" wins (the safer). No matching glob: "never".
import type { Approval, ApprovalGlobs } from './schemas.js'

function globToRegExp(glob: string): RegExp {
  const escaped = glob.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
  return new RegExp(`^${escaped.join('[\\s\\S]*')}$`)
}

const specificity = (glob: string): number => glob.replaceAll('*', '').length

export function approvalOf(globs: ApprovalGlobs, toolName: string): Approval {
  let best: { score: number; approval: Approval } | undefined
  for (const [glob, approval] of Object.entries(globs)) {
    if (!globToRegExp(glob).test(toolName)) continue
    const score = specificity(glob)
    if (!best || score > best.score || (score === best.score && approval === 'always')) best = { score, approval }
  }
  return best?.approval ?? 'never'
}
