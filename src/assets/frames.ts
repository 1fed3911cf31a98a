// How many pixels an image asks a viewer to decode over all its frames: an animated PNG (acTL), WebP (ANMF
// chunks) or GIF (one image descriptor per frame, each with its own size, which may exceed the logical screen)
// can hold many full-size frames in a small file — a decompression bomb for whoever shows it. Only the
// container's chunk and block headers are walked; no pixel data is decoded. A container that ends early is
// counted as far as it goes (viewers show what is there).
import type { ImageType } from './schemas.js'

/** The sum of width × height over every frame (the image's own area for a still image). */
export function decodedPixels(bytes: Buffer, type: ImageType, width: number, height: number): number {
  switch (type) {
    case 'image/png':
      return width * height * pngFrames(bytes)
    case 'image/webp':
      return width * height * webpFrames(bytes)
    case 'image/gif':
      return gifFramePixels(bytes) ?? width * height
    default:
      return width * height
  }
}

/** acTL's num_frames (APNG), read before the first IDAT; 1 for a still PNG. */
function pngFrames(bytes: Buffer): number {
  for (let at = 8; at + 12 <= bytes.length; ) {
    const length = bytes.readUInt32BE(at)
    const type = bytes.toString('latin1', at + 4, at + 8)
    if (type === 'acTL' && at + 12 <= bytes.length) return Math.max(1, bytes.readUInt32BE(at + 8))
    if (type === 'IDAT' || type === 'IEND') break
    at += 12 + length
  }
  return 1
}

/** ANMF chunks of an animated WebP; 1 for a still one. */
function webpFrames(bytes: Buffer): number {
  let frames = 0
  for (let at = 12; at + 8 <= bytes.length; ) {
    const size = bytes.readUInt32LE(at + 4)
    if (bytes.toString('latin1', at, at + 4) === 'ANMF') frames++
    at += 8 + size + (size % 2)
  }
  return Math.max(1, frames)
}

/** Skips GIF data sub-blocks (a length byte, then that many bytes, until a zero length); the offset after them. */
function skipSubBlocks(bytes: Buffer, at: number): number {
  while (at < bytes.length && bytes[at] !== 0) at += 1 + (bytes[at] as number)
  return at + 1
}

/** The sum of the frames' areas (each image descriptor's width × height), or null when there is no frame. */
function gifFramePixels(bytes: Buffer): number | null {
  if (bytes.length < 13) return null
  const packed = bytes[10] as number
  let at = 13 + (packed & 0x80 ? 3 * 2 ** ((packed & 0x07) + 1) : 0)
  let pixels = 0
  let frames = 0
  while (at < bytes.length) {
    const block = bytes[at]
    if (block === 0x3b) break // trailer
    if (block === 0x21) {
      at = skipSubBlocks(bytes, at + 2) // extension: introducer, label, sub-blocks
    } else if (block === 0x2c) {
      if (at + 10 > bytes.length) break
      pixels += bytes.readUInt16LE(at + 5) * bytes.readUInt16LE(at + 7)
      frames++
      const local = bytes[at + 9] as number
      at += 10 + (local & 0x80 ? 3 * 2 ** ((local & 0x07) + 1) : 0)
      at = skipSubBlocks(bytes, at + 1) // LZW minimum code size, then the image data
    } else {
      break // not a GIF block: stop counting here, as a viewer stops showing
    }
  }
  return frames > 0 ? pixels : null
}
