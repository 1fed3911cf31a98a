// Small images built byte by byte for the asset tests: a real PNG (1-bit grey, decodable, deflated rows) of any
// size, and the headers of JPEG, GIF and WebP files with the dimensions they declare.
import { crc32, deflateSync } from 'node:zlib'

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(body))
  return Buffer.concat([length, body, crc])
}

/** A whole PNG: `width` × `height` black pixels, 1 bit each (rows of zeros deflate to almost nothing). */
export function png(width: number, height: number, frames?: number): Buffer {
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header[8] = 1 // bit depth
  header[9] = 0 // greyscale
  const rowBytes = 1 + Math.ceil(width / 8)
  // A bomb's header (huge dimensions) with a token IDAT: what it would decode to is never produced here.
  const raw = width * height <= 16384 * 16384 ? Buffer.alloc(rowBytes * Math.min(height, 8192)) : Buffer.alloc(rowBytes)
  // An animated PNG (APNG) declares its frame count in acTL, before the first IDAT.
  const animation = frames === undefined ? [] : [chunk('acTL', Buffer.from([0, 0, 0, 0, 0, 0, 0, 0].map((_, i) => (i < 4 ? (frames >>> (8 * (3 - i))) & 0xff : 0))))]
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', header), ...animation, chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))])
}

export function jpeg(width: number, height: number): Buffer {
  const app0 = Buffer.from([0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00])
  const sof = Buffer.from([0xff, 0xc0, 0x00, 0x11, 0x08, height >> 8, height & 0xff, width >> 8, width & 0xff, 0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01])
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, sof, Buffer.from([0xff, 0xd9])])
}

/** A GIF whose logical screen is `width` × `height`, with `frames` frames of `frameSize` (default: the screen). */
export function gif(width: number, height: number, frames = 0, frameSize: [number, number] = [width, height]): Buffer {
  const screen = Buffer.alloc(7)
  screen.writeUInt16LE(width, 0)
  screen.writeUInt16LE(height, 2)
  const frame = Buffer.alloc(10)
  frame[0] = 0x2c
  frame.writeUInt16LE(frameSize[0], 5)
  frame.writeUInt16LE(frameSize[1], 7)
  const control = Buffer.from([0x21, 0xf9, 0x04, 0x00, 0x0a, 0x00, 0x00, 0x00]) // graphic control extension: 100 ms
  const data = Buffer.from([0x02, 0x02, 0x4c, 0x01, 0x00]) // LZW minimum code size, one sub-block, terminator
  const body = Array.from({ length: frames }, () => [control, frame, data]).flat()
  return Buffer.concat([Buffer.from('GIF89a', 'latin1'), screen, ...body, Buffer.from([0x3b])])
}

/** An extended WebP (VP8X) header (the canvas size is stored minus one, in 24 bits), with `frames` ANMF chunks. */
export function webp(width: number, height: number, frames = 0): Buffer {
  const header = Buffer.alloc(30)
  header.write('RIFF', 0, 'latin1')
  header.write('WEBP', 8, 'latin1')
  header.write('VP8X', 12, 'latin1')
  header.writeUInt32LE(10, 16)
  if (frames > 0) header[20] = 0x02 // animation flag
  header.writeUIntLE(width - 1, 24, 3)
  header.writeUIntLE(height - 1, 27, 3)
  const frame = Buffer.alloc(24)
  frame.write('ANMF', 0, 'latin1')
  frame.writeUInt32LE(16, 4)
  const file = Buffer.concat([header, ...Array.from({ length: frames }, () => frame)])
  file.writeUInt32LE(file.length - 8, 4)
  return file
}

export const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>')
