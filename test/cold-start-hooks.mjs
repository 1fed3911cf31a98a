// Loader hooks for test/cold-start.test.ts: every module URL the process loads is appended to the file named in
// the registration's data (the hooks run on the loader's own thread, so they write rather than return it).
import { appendFileSync } from 'node:fs'

let file

export function initialize(data) {
  file = data.file
}

export async function load(url, context, next) {
  appendFileSync(file, `${url}\n`)
  return next(url, context)
}
