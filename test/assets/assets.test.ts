// Assets (docs/agents-templates-assets.md, "Avatars: assets") on both databases: upload of each image type as the raw body, the
// signature held against the Content-Type (a lie, an SVG, text, an empty body: 415), the byte bound (413) and
// the pixel bound (422) each at the bound and one past it, a decompression bomb's header refused unread, the
// content served from the database with its safe headers and an ETag (304), on a second instance too, another
// workspace's asset a 404, deletion by admins only, and a refused upload stores nothing.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { ensureWorkspace } from '../../src/workspaces/store.js'
import { build, dialects, send, TEST_SECRET_KEY } from '../helpers.js'
import { gif, jpeg, png, SVG, webp } from './images.js'
import { createKey } from '../auth.js'

const MiB = 1024 * 1024

/** `size` bytes of a real 10 × 10 PNG followed by padding (decoders stop at IEND; the signature is the PNG's). */
const pngOfSize = (size: number) => {
  const image = png(10, 10)
  return Buffer.concat([image, Buffer.alloc(size - image.length)])
}

for (const dialect of dialects()) {
  describe(`assets (${dialect})`, () => {
    let app: FastifyInstance
    let admin: Record<string, string>
    let member: Record<string, string>
    let foreign: Record<string, string>
    before(async () => {
      app = await build(dialect, { TANDEM_AUTH: 'required' })
      const db = app.database.db
      const workspaceId = await ensureWorkspace(db, 'default')
      admin = (await createKey(app, { workspaceId, name: 'admin', role: 'admin' })).headers
      member = (await createKey(app, { workspaceId, name: 'member' })).headers
      foreign = (await createKey(app, { workspace: 'foreign', name: 'f', role: 'admin' })).headers
    })
    after(() => app.close())

    const upload = (body: Buffer | string, contentType: string | undefined, headers = member) =>
      app.inject({ method: 'POST', url: '/api/assets', payload: body, headers: { ...headers, ...(contentType ? { 'content-type': contentType } : {}) } })
    const count = async () => Number((await app.database.db.selectFrom('assets').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)

    for (const [type, image, width, height] of [
      ['image/png', png(64, 48), 64, 48], ['image/jpeg', jpeg(640, 480), 640, 480], ['image/gif', gif(5, 7), 5, 7], ['image/webp', webp(100, 50), 100, 50],
    ] as const) {
      it(`${type}: 201 with Location and the sniffed dimensions; the JSON and the bytes read back`, async () => {
        const res = await upload(image, type)
        assert.equal(res.statusCode, 201, res.body)
        const asset = res.json()
        assert.deepEqual(Object.keys(asset).sort(), ['bytes', 'contentType', 'createdAt', 'height', 'id', 'sha256', 'width'])
        assert.equal(res.headers.location, `/api/assets/${asset.id}`)
        assert.deepEqual({ contentType: asset.contentType, bytes: asset.bytes, width: asset.width, height: asset.height }, { contentType: type, bytes: image.length, width, height })
        assert.equal(asset.sha256, createHash('sha256').update(image).digest('hex'))
        assert.deepEqual((await send(app, 'GET', `/api/assets/${asset.id}`, undefined, member)).json(), asset)
        const content = await app.inject({ method: 'GET', url: `/api/assets/${asset.id}/content`, headers: member })
        assert.equal(content.statusCode, 200)
        assert.deepEqual(content.rawPayload, image)
        assert.equal(content.headers['content-type'], type)
      })
    }

    it('serves the content inert: nosniff, a CSP that allows nothing and sandboxes, an ETag (304 when it matches), a long private cache', async () => {
      const asset = (await upload(png(8, 8), 'image/png')).json()
      const content = await app.inject({ method: 'GET', url: `/api/assets/${asset.id}/content`, headers: member })
      assert.equal(content.headers['x-content-type-options'], 'nosniff')
      assert.equal(content.headers['content-security-policy'], "default-src 'none'; sandbox")
      assert.equal(content.headers.etag, `"${asset.sha256}"`)
      assert.equal(content.headers['cache-control'], 'private, max-age=31536000, immutable')
      assert.equal(content.headers['content-length'], String(asset.bytes))
      const again = await app.inject({ method: 'GET', url: `/api/assets/${asset.id}/content`, headers: { ...member, 'if-none-match': `"other", ${content.headers.etag}` } })
      assert.equal(again.statusCode, 304)
      assert.equal(again.rawPayload.length, 0)
      const changed = await app.inject({ method: 'GET', url: `/api/assets/${asset.id}/content`, headers: { ...member, 'if-none-match': '"other"' } })
      assert.equal(changed.statusCode, 200)
    })

    it('refuses with 415 an asset whose bytes are not its Content-Type, an SVG, text, JSON, no type and an empty body; nothing is stored', async () => {
      const before = await count()
      const cases: Array<[Buffer | string, string | undefined, RegExp]> = [
        [jpeg(10, 10), 'image/png', /JPEG image, not image\/png/],
        [png(10, 10), 'image/gif', /PNG image, not image\/gif/],
        [gif(10, 10), 'image/webp', /GIF image, not image\/webp/],
        [SVG, 'image/png', /SVG image, not image\/png/],
        [SVG, 'image/svg+xml', /image\/svg\+xml/],
        [png(10, 10), 'text/html', /text\/html/],
        ['hello, I am a picture', 'image/png', /not a readable image/],
        [JSON.stringify({ image: 'x' }), 'application/json', /application\/json/],
        [png(10, 10), undefined, /Content-Type image\/png/],
        [Buffer.alloc(0), 'image/png', /empty/],
        [png(10, 10).subarray(0, 12), 'image/png', /not a readable image/],
      ]
      for (const [body, type, detail] of cases) {
        const res = await upload(body, type)
        assert.equal(res.statusCode, 415, `${type}: ${res.body}`)
        assert.equal(res.json().type, 'urn:tandem:problem:unsupported-media-type')
        assert.match(res.json().detail, detail)
      }
      assert.equal(await count(), before)
    })

    it('takes 4096 × 4096 pixels and refuses one more on either side, and a decompression bomb, with 422', async () => {
      assert.equal((await upload(png(4096, 4096), 'image/png')).statusCode, 201)
      assert.equal((await upload(webp(4096, 1), 'image/webp')).statusCode, 201)
      const before = await count()
      for (const [image, type] of [[png(4097, 10), 'image/png'], [png(10, 4097), 'image/png'], [jpeg(4097, 4097), 'image/jpeg'], [gif(65535, 2), 'image/gif'], [webp(16384, 16384), 'image/webp']] as const) {
        const res = await upload(image, type)
        assert.equal(res.statusCode, 422, res.body)
        assert.equal(res.json().type, 'urn:tandem:problem:unprocessable')
        assert.match(res.json().detail, /at most 4096 × 4096/)
      }
      // 100 000 × 100 000 pixels in 92 bytes: 1.25 GB once decoded; refused from its header, never decoded.
      const bomb = png(100000, 100000)
      assert.ok(bomb.length < 200)
      const res = await upload(bomb, 'image/png')
      assert.equal(res.statusCode, 422)
      assert.match(res.json().detail, /100000 × 100000/)
      assert.equal(await count(), before)
    })

    it('bounds the pixels an animation asks a viewer to decode: four 4096 × 4096 frames, and one more frame is a 422', async () => {
      const taken: Array<[Buffer, string]> = [
        [png(4096, 4096, 4), 'image/png'], [webp(4096, 4096, 4), 'image/webp'], [gif(1024, 1024, 64), 'image/gif'], [gif(64, 64, 1000), 'image/gif'],
      ]
      for (const [image, type] of taken) assert.equal((await upload(image, type)).statusCode, 201, type)
      const before = await count()
      const refused: Array<[Buffer, string]> = [
        [png(4096, 4096, 5), 'image/png'], [webp(4096, 4096, 5), 'image/webp'], [gif(1024, 1024, 65), 'image/gif'],
        // A 10 × 10 screen whose one frame is 65535 × 65535: the frame's own size counts.
        [gif(10, 10, 1, [65535, 65535]), 'image/gif'],
      ]
      for (const [image, type] of refused) {
        assert.ok(image.length < 4096, 'a small file')
        const res = await upload(image, type)
        assert.equal(res.statusCode, 422, `${type}: ${res.body}`)
        assert.match(res.json().detail, /frames add up to \d+ pixels/)
      }
      assert.equal(await count(), before)
    })

    it('takes TANDEM_ASSET_MAX_BYTES (default 1 MiB) and refuses one byte more with 413', async () => {
      assert.equal((await upload(pngOfSize(MiB), 'image/png')).statusCode, 201)
      const res = await upload(pngOfSize(MiB + 1), 'image/png')
      assert.equal(res.statusCode, 413)
      assert.equal(res.json().type, 'urn:tandem:problem:payload-too-large')
      assert.match(res.json().detail, /at most 1048576 bytes/)
    })

    it('honours Idempotency-Key: the same bytes get the first answer again, other bytes with the key are a 422', async () => {
      const before = await count()
      const first = await upload(png(20, 20), 'image/png', { ...member, 'idempotency-key': 'avatar-upload-1' })
      assert.equal(first.statusCode, 201)
      const again = await upload(png(20, 20), 'image/png', { ...member, 'idempotency-key': 'avatar-upload-1' })
      assert.equal(again.statusCode, 201)
      assert.equal(again.headers['idempotent-replayed'], 'true')
      assert.equal(again.headers.location, first.headers.location)
      assert.deepEqual(again.json(), first.json())
      const other = await upload(png(21, 20), 'image/png', { ...member, 'idempotency-key': 'avatar-upload-1' })
      assert.equal(other.statusCode, 422)
      assert.equal(other.json().type, 'urn:tandem:problem:idempotency-key-reused')
      assert.equal(await count(), before + 1)
    })

    it("hides another workspace's asset behind 404 (JSON, content and delete); a missing id is 404 too", async () => {
      const asset = (await upload(png(3, 3), 'image/png')).json()
      for (const url of [`/api/assets/${asset.id}`, `/api/assets/${asset.id}/content`]) {
        assert.equal((await send(app, 'GET', url, undefined, foreign)).statusCode, 404)
      }
      assert.equal((await send(app, 'DELETE', `/api/assets/${asset.id}`, undefined, foreign)).statusCode, 404)
      assert.equal((await send(app, 'GET', `/api/assets/${asset.id}`, undefined, member)).statusCode, 200)
      assert.equal((await send(app, 'GET', '/api/assets/0193a5b4-0000-7000-8000-000000000000/content', undefined, member)).statusCode, 404)
      assert.equal((await send(app, 'GET', '/api/assets/not-a-uuid', undefined, member)).statusCode, 400)
    })

    it('deletes for admins only (members 403, then admin 204, then 404); needs a key', async () => {
      const asset = (await upload(png(3, 3), 'image/png')).json()
      assert.equal((await send(app, 'DELETE', `/api/assets/${asset.id}`, undefined, member)).statusCode, 403)
      assert.equal((await send(app, 'DELETE', `/api/assets/${asset.id}`, undefined, admin)).statusCode, 204)
      assert.equal((await send(app, 'GET', `/api/assets/${asset.id}/content`, undefined, member)).statusCode, 404)
      assert.equal((await upload(png(3, 3), 'image/png', {})).statusCode, 401)
    })

    it('an agent may name any UUID as avatarAssetId (the spec allows it), an asset or not', async () => {
      const asset = (await upload(png(3, 3), 'image/png')).json()
      for (const avatarAssetId of [asset.id, '0193a5b4-0000-7000-8000-00000000abcd']) {
        const res = await send(app, 'POST', '/api/agents', { name: 'With avatar', avatarAssetId }, admin)
        assert.equal(res.statusCode, 201, res.body)
        assert.equal(res.json().avatarAssetId, avatarAssetId)
      }
    })

    it('serves an asset from another instance on the same database (assets live in the database)', async () => {
      if (dialect !== 'postgres') return // a second app on one SQLite file would be two writers of one file in one process
      const asset = (await upload(png(12, 12), 'image/png')).json()
      const config = loadConfig({ LOG_LEVEL: 'silent', TANDEM_WORKERS: '0', TANDEM_AUTH: 'required', TANDEM_SECRET_KEY: TEST_SECRET_KEY, DATABASE_URL: app.config.databaseUrl })
      const second = await buildApp(config, { connect: { schema: app.database.schema, poolSize: 2 } })
      try {
        await second.ready()
        const content = await second.inject({ method: 'GET', url: `/api/assets/${asset.id}/content`, headers: member })
        assert.equal(content.statusCode, 200)
        assert.deepEqual(content.rawPayload, png(12, 12))
      } finally {
        await second.close()
      }
    })
  })
}

describe('assets: TANDEM_ASSET_MAX_BYTES', () => {
  it('a larger bound than the 1 MiB JSON body limit takes a larger image, and its bound + 1 is a 413', async () => {
    const app = await build('sqlite', { TANDEM_ASSET_MAX_BYTES: String(2 * MiB) })
    try {
      const at = (size: number) => app.inject({ method: 'POST', url: '/api/assets', payload: pngOfSize(size), headers: { 'content-type': 'image/png' } })
      assert.equal((await at(2 * MiB)).statusCode, 201)
      assert.equal((await at(2 * MiB + 1)).statusCode, 413)
    } finally {
      await app.close()
    }
  })

  it('refuses a bad value at start-up naming the variable', () => {
    assert.throws(() => loadConfig({ TANDEM_ASSET_MAX_BYTES: '0' }), /TANDEM_ASSET_MAX_BYTES/)
    assert.throws(() => loadConfig({ TANDEM_ASSET_MAX_BYTES: String(16 * MiB + 1) }), /TANDEM_ASSET_MAX_BYTES/)
  })
})
