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
export function png(width: number, height: number): Buffer {
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header[8] = 1 // bit depth
  header[9] = 0 // greyscale
  const rowBytes = 1 + Math.ceil(width / 8)
  // A bomb's header (huge dimensions) with a token IDAT: what it would decode to is never produced here.
  const raw = width * height <= 16384 * 16384 ? Buffer.alloc(rowBytes * Math.min(height, 8192)) : Buffer.alloc(rowBytes)
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', header), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))])
}

export function jpeg(width: number, height: number): Buffer {
  const app0 = Buffer.from([0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00])
  const sof = Buffer.from([0xff, 0xc0, 0x00, 0x11, 0x08, height >> 8, height & 0xff, width >> 8, width & 0xff, 0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01])
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, sof, Buffer.from([0xff, 0xd9])])
}

export function gif(width: number, height: number): Buffer {
  const screen = Buffer.alloc(7)
  screen.writeUInt16LE(width, 0)
  screen.writeUInt16LE(height, 2)
  return Buffer.concat([Buffer.from('GIF89a', 'latin1'), screen, Buffer.from([0x3b])])
}

/** An extended WebP (VP8X) header: the canvas size is stored minus one, in 24 bits. */
export function webp(width: number, height: number): Buffer {
  const file = Buffer.alloc(30)
  file.write('RIFF', 0, 'latin1')
  file.writeUInt32LE(22, 4)
  file.write('WEBP', 8, 'latin1')
  file.write('VP8X', 12, 'latin1')
  file.writeUInt32LE(10, 16)
  file.writeUIntLE(width - 1, 24, 3)
  file.writeUIntLE(height - 1, 27, 3)
  return file
}

export const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>')
