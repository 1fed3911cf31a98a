// What a problem says must read as plain English to the person who gets it: no section numbers of the
// contract ("spec 2.1", "§"), counts in the right number ("at least 1 character", "2 items"), and statuses in
// words ("has succeeded", not "is succeeded" or "is awaiting_decision").
// test/fuzz.test.ts checks every answer of the fuzz run with this; test/http/problem-wording.test.ts checks it.

const NOUNS = ['character', 'item', 'byte', 'problem', 'paragraph', 'block', 'phase', 'operator', 'level', 'second', 'attempt', 'run', 'message', 'task', 'key', 'property']
const PLURAL = (noun: string) => (noun === 'property' ? 'properties' : `${noun}s`)
const ONE_MANY = new RegExp(`(?<![\\d.,])\\b1 (?:${NOUNS.map(PLURAL).join('|')})\\b`)
const MANY_ONE = new RegExp(`(?<![\\d.,])\\b(?:0|[2-9]|[1-9]\\d+) (?:${NOUNS.join('|')})\\b`)
const SPEC = /\bspec\b|§/i
// A status said as its code ("is succeeded", "is awaiting_decision") instead of in words ("has succeeded").
const STATUS_CODE = /\b(?:is|are) (?:succeeded|failed|rejected|canceled|denied|awaiting_[a-z_]+)\b/

/** The wording faults of one text: empty when it reads well. */
export function wordingFaults(text: string): string[] {
  const faults: string[] = []
  if (SPEC.test(text)) faults.push(`speaks of the spec: ${text}`)
  const oneMany = ONE_MANY.exec(text)
  if (oneMany) faults.push(`"${oneMany[0]}" should be singular: ${text}`)
  const manyOne = MANY_ONE.exec(text)
  if (manyOne) faults.push(`"${manyOne[0]}" should be plural: ${text}`)
  const statusCode = STATUS_CODE.exec(text)
  if (statusCode) faults.push(`"${statusCode[0]}" says a status as its code: ${text}`)
  return faults
}

/** Every text of a problem document a person reads: title, detail and each error's detail. */
export function problemWordingFaults(problem: { title?: unknown; detail?: unknown; errors?: Array<{ detail?: unknown }> }): string[] {
  const texts = [problem.title, problem.detail, ...(problem.errors ?? []).map((error) => error.detail)].filter((text): text is string => typeof text === 'string')
  return texts.flatMap(wordingFaults)
}
