// Asset shapes (docs/agents-templates-assets.md, "Avatars: assets"): the stored asset as clients read it, and the media types taken.
import Type, { type Static } from 'typebox'
import { Timestamp, Uuid } from '../http/schemas.js'

/** The media types an asset may have, each with image-size's name for the signature it must carry. */
export const IMAGE_TYPES = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp', 'image/gif': 'gif' } as const
export type ImageType = keyof typeof IMAGE_TYPES
export const MAX_ASSET_PIXELS_PER_SIDE = 4096
/** Pixels a viewer decodes over all frames of an animation: four full-size frames, or 256 frames of 512 × 512. */
export const MAX_ASSET_DECODED_PIXELS = 4 * 4096 * 4096

export const Asset = Type.Object(
  {
    id: Uuid,
    contentType: Type.Unsafe<ImageType>({ type: 'string', enum: Object.keys(IMAGE_TYPES) }),
    bytes: Type.Integer({ minimum: 1, description: 'size of the content in bytes' }),
    width: Type.Integer({ minimum: 1, maximum: MAX_ASSET_PIXELS_PER_SIDE }),
    height: Type.Integer({ minimum: 1, maximum: MAX_ASSET_PIXELS_PER_SIDE }),
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'hex SHA-256 of the content (its ETag)' }),
    createdAt: Timestamp,
  },
  { title: 'Asset' },
)
export type Asset = Static<typeof Asset>

/** The upload body, as OpenAPI shows it: the raw image under one of the four media types. */
export const ImageBody = {
  description: 'the raw image bytes',
  content: Object.fromEntries(Object.keys(IMAGE_TYPES).map((type) => [type, { schema: { description: `the bytes of the image, as ${type}` } }])),
}

/** The content, as OpenAPI shows it (sent with the stored media type). */
export const ImageContent = {
  description: 'the image, with its stored Content-Type',
  content: Object.fromEntries(Object.keys(IMAGE_TYPES).map((type) => [type, { schema: { type: 'string', contentMediaType: type } }])),
}
