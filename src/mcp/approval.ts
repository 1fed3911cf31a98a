// Which approval a tool gets from its server's globs. `*` matches any run of characters (none included); every
// other character matches itself. The most specific matching glob decides, so the order the globs were written
// in never matters: the one with the most characters other than `*` wins (an exact name beats any glob), and
// between equally specific globs that disagree, "always" wins (the safer). No matching glob: "never".
import type { Approval, ApprovalGlobs } from './schemas.js'

/**
 * Whether `name` matches `glob`, in time linear in the name's length (for globs of bounded length): the part before
 * the first `*` must begin the name, the part after the last end it, and each part between is found, leftmost
 * first, after the one before — taking the leftmost place never loses a match, so there is no backtracking. (A
 * regular expression with `[\s\S]*` for each `*` backtracks: quadratic in the name, seconds for a long one.)
 */
export function globMatches(glob: string, name: string): boolean {
  const parts = glob.split('*')
  if (parts.length === 1) return glob === name
  const first = parts[0] as string
  const last = parts[parts.length - 1] as string
  if (first.length + last.length > name.length || !name.startsWith(first) || !name.endsWith(last)) return false
  let at = first.length
  const end = name.length - last.length
  for (let i = 1; i < parts.length - 1; i++) {
    const part = parts[i] as string
    if (part === '') continue
    const found = name.indexOf(part, at)
    if (found < 0 || found + part.length > end) return false
    at = found + part.length
  }
  return true
}

const specificity = (glob: string): number => glob.replaceAll('*', '').length

export function approvalOf(globs: ApprovalGlobs, toolName: string): Approval {
  let best: { score: number; approval: Approval } | undefined
  for (const [glob, approval] of Object.entries(globs)) {
    if (!globMatches(glob, toolName)) continue
    const score = specificity(glob)
    if (!best || score > best.score || (score === best.score && approval === 'always')) best = { score, approval }
  }
  return best?.approval ?? 'never'
}
