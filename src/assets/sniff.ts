// What an uploaded image really is: its signature and dimensions, read by image-size from the headers of the
// file alone (nothing is decoded, so a decompression bomb costs us nothing), then held against what the
// request says (Content-Type) and against the bounds. A lie about the type, an SVG, anything that is not one
// of the four image types is 415; a side beyond 4096 pixels (how bombs announce themselves), or an animation
// whose frames add up to more than MAX_ASSET_DECODED_PIXELS (frames.ts), is 422.
import { imageSize } from 'image-size'
import { AppError } from '../http/problem.js'
import { decodedPixels } from './frames.js'
import { IMAGE_TYPES, MAX_ASSET_DECODED_PIXELS, MAX_ASSET_PIXELS_PER_SIDE, type ImageType } from './schemas.js'

const NAMES: Record<string, string> = { png: 'a PNG image', jpg: 'a JPEG image', webp: 'a WebP image', gif: 'a GIF image', svg: 'an SVG image' }

/** The media type of a Content-Type header (lower case, without parameters), or '' when there is none. */
export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase()
}

export function isImageType(type: string): type is ImageType {
  return Object.hasOwn(IMAGE_TYPES, type)
}

const accepted = () => {
  const types = Object.keys(IMAGE_TYPES)
  return `${types.slice(0, -1).join(', ')} or ${types.at(-1)}`
}

export function refuseMediaType(type: string): AppError {
  return new AppError('unsupported-media-type', `Send the image with Content-Type ${accepted()}${type ? ` (this body is ${type})` : ''}.`)
}

/** The image's dimensions, when its bytes are the declared type within the bounds; else the problem to answer. */
export function sniffImage(bytes: Buffer, declared: ImageType): { width: number; height: number } {
  let size: ReturnType<typeof imageSize>
  try {
    size = imageSize(bytes)
  } catch {
    throw new AppError('unsupported-media-type', `The body is not a readable image; send ${accepted()}.`)
  }
  if (size.type !== IMAGE_TYPES[declared]) {
    const actual = (size.type && NAMES[size.type]) ?? `a ${size.type ?? 'file of unknown'} type`
    throw new AppError('unsupported-media-type', `The body is ${actual}, not ${declared} as its Content-Type says.`)
  }
  const { width, height } = size
  if (!width || !height || width < 1 || height < 1) throw new AppError('unprocessable', 'The image has no pixels (a width or height of 0).')
  if (width > MAX_ASSET_PIXELS_PER_SIDE || height > MAX_ASSET_PIXELS_PER_SIDE) {
    throw new AppError('unprocessable', `The image is ${width} × ${height} pixels; at most ${MAX_ASSET_PIXELS_PER_SIDE} × ${MAX_ASSET_PIXELS_PER_SIDE} are taken.`)
  }
  const pixels = decodedPixels(bytes, declared, width, height)
  if (pixels > MAX_ASSET_DECODED_PIXELS) {
    throw new AppError('unprocessable', `The image's frames add up to ${pixels} pixels to decode; at most ${MAX_ASSET_DECODED_PIXELS} (four frames of 4096 × 4096) are taken.`)
  }
  return { width, height }
}
