// `npm ci` warns that cookie@2 and content-disposition@3 want Node >= 22. They cannot be pinned to older
// lines (their dependents call functions only these majors have: light-my-request `stringifySetCookie`,
// @fastify/static `create`), so this shows the warning is harmless: on this Node (20.19+) both load and do
// what their dependents ask of them.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)

describe('dependencies that declare Node >= 22 work on Node 20', () => {
  it('cookie: stringifySetCookie, as light-my-request calls it', () => {
    const { stringifySetCookie, parseCookie } = require('cookie') as { stringifySetCookie: (c: object) => string; parseCookie: (s: string) => Record<string, string> }
    assert.equal(stringifySetCookie({ name: 'a', value: 'b c', httpOnly: true, path: '/' }), 'a=b%20c; Path=/; HttpOnly')
    assert.deepEqual({ ...parseCookie('a=1; b=%20') }, { a: '1', b: ' ' })
  })

  it('content-disposition: create, as @fastify/static calls it', () => {
    const { create } = require('content-disposition') as { create: (name: string) => string }
    assert.equal(create('plan.txt'), 'attachment; filename=plan.txt')
    assert.equal(create('résumé.txt'), 'attachment; filename="r?sum?.txt"; filename*=UTF-8\'\'r%C3%A9sum%C3%A9.txt')
  })
})
