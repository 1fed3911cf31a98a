// The check that every status the tests see is declared in the OpenAPI document (test/openapi-statuses.ts, on
// every app build() makes): it records the answers of documented operations, ignores the rest, and at the app's
// close names the operation and the status the document leaves out, and fails the test file's process.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { build, send } from '../helpers.js'
import { answersOf, checkStatuses, undeclaredStatuses } from '../openapi-statuses.js'

describe('undeclared statuses fail the close of the app that sent them', () => {
  it('records documented answers, skips the rest, and names a status the document lacks', async () => {
    const app = await build('sqlite')
    assert.equal((await send(app, 'GET', '/api/me')).statusCode, 200)
    assert.equal((await send(app, 'GET', '/api/agents/not-a-uuid')).statusCode, 400)
    assert.equal((await send(app, 'GET', '/no/such/path')).statusCode, 404)
    const answers = answersOf(app)!
    assert.ok(answers.has('GET /api/me 200'), [...answers].join(', '))
    assert.ok(answers.has('GET /api/agents/{id} 400'), [...answers].join(', '))
    const document = (await send(app, 'GET', '/openapi.json')).json()
    assert.deepEqual(undeclaredStatuses(document, answers), [], 'all declared')
    assert.deepEqual(undeclaredStatuses(document, ['GET /api/me 418', 'GET /nowhere 418', 'POST /api/me 418']), ['GET /api/me (getMe) → 418'], 'only documented operations are checked')
    assert.deepEqual(undeclaredStatuses({ paths: { '/x': { get: { operationId: 'x', responses: { '4XX': {} } } } } }, ['GET /x 418', 'GET /x 502']), ['GET /x (x) → 502'], 'a class of statuses declares its members')
    assert.equal(checkStatuses(app), null)
    answers.add('GET /api/me 418')
    assert.match(checkStatuses(app) ?? '', /does not declare[^]*GET \/api\/me \(getMe\) → 418/)
    answers.delete('GET /api/me 418')
    await app.close()
    assert.notEqual(process.exitCode, 1, 'a clean close leaves the exit code alone')
  })
})
