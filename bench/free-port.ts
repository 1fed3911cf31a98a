// A port nobody listens on now, for a service the benchmarks start (it is told the port by PORT).
import { createServer, type AddressInfo } from 'node:net'

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })
}
