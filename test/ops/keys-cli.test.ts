// `keys create`: a key for an existing admin's handle is made only when asked for by --handle and --role admin
// (`keys create --name Local` printed a key of the local admin, @local). The default role is member.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { createKeyCommand } from '../../src/principals/cli.js'

const principalOf = (line: string | undefined) => /principal (\S+) @(\S+), role (\w+)/.exec(line ?? '')?.slice(1)

for (const dialect of dialects()) {
  describe(`keys create and admin handles (${dialect})`, () => {
    let app: FastifyInstance
    before(async () => {
      app = await build(dialect)
    })
    after(() => app.close())

    it('--name Local without --role is refused, not a key of the local admin', async () => {
      await assert.rejects(createKeyCommand(app.database.db, { name: 'Local', workspace: 'default' }), /is an admin; a new key of it needs both --handle local and --role admin/)
      await assert.rejects(createKeyCommand(app.database.db, { name: 'Local', handle: 'local', workspace: 'default' }), /is an admin/)
      await assert.rejects(createKeyCommand(app.database.db, { name: 'Local', role: 'admin', workspace: 'default' }), /is an admin/)
    })

    it('an admin handle takes a new key with --handle and --role admin', async () => {
      const lines = await createKeyCommand(app.database.db, { name: 'Local laptop', handle: '@local', role: 'admin', workspace: 'default' })
      const [, handle, role] = principalOf(lines[0]) ?? []
      assert.deepEqual([handle, role], ['local', 'admin'])
      const me = await send(app, 'GET', '/api/me', undefined, { authorization: `Bearer ${lines[2]}` })
      assert.equal(me.json().role, 'admin')
    })

    it('a new name makes a member, and a member handle takes a new key without --role', async () => {
      const first = principalOf((await createKeyCommand(app.database.db, { name: 'Dana', workspace: 'default' }))[0])
      assert.equal(first?.[2], 'member')
      const again = principalOf((await createKeyCommand(app.database.db, { name: 'Dana', workspace: 'default' }))[0])
      assert.deepEqual(again, first)
    })

    it('an admin made on purpose is reused only on purpose', async () => {
      const admin = principalOf((await createKeyCommand(app.database.db, { name: 'Ops', role: 'admin', workspace: 'default' }))[0])
      assert.equal(admin?.[2], 'admin')
      await assert.rejects(createKeyCommand(app.database.db, { name: 'Ops', workspace: 'default' }), /is an admin/)
      const reused = principalOf((await createKeyCommand(app.database.db, { name: 'Ops 2', handle: 'ops', role: 'admin', workspace: 'default' }))[0])
      assert.deepEqual(reused, admin)
    })
  })
}
