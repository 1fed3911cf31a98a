// The egress guard: every outgoing call to an address a user gave (agent endpoints, vendor bases, webhook
// subscriptions) reaches only public unicast addresses, unless TANDEM_EGRESS_ALLOW opens a range.
//
// Mechanism: undici's own fetch over an undici Agent whose connector checks the address it is about to connect
// to — an IP literal before connecting, a host name inside the `lookup` that net.connect calls — so the checked
// address is the one connected to (no second resolution: DNS rebinding cannot slip through) and a refused
// address never sees a packet. ipaddr.js classifies addresses (its special ranges follow the IANA registries).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { Agent as HttpAgent, type AgentOptions } from 'node:http'
import { Agent as HttpsAgent } from 'node:https'
import { isIP, type LookupFunction, type Socket } from 'node:net'
import ipaddr from 'ipaddr.js'
import type { Dispatcher } from 'undici'

/** undici's request options less the dispatcher, which is the guard's. */
export type GuardedRequestOptions = Omit<Dispatcher.RequestOptions, 'origin' | 'path' | 'dispatcher'>

export interface EgressGuard {
  /** fetch through the guard; redirects are never followed (`redirect: 'manual'` is forced). */
  fetch: typeof fetch
  /**
   * undici's `request` through the guard (redirects are never followed), for the hot path that needs no WHATWG
   * Request and Response (a webhook agent's delivery: a third of fetch's cost). Connection failures reject with
   * undici's errors; a refused address with EgressDeniedError.
   */
  request(url: string, options: GuardedRequestOptions): Promise<Dispatcher.ResponseData>
  /** A dns.lookup-compatible function that refuses non-public addresses (for `ws` or node:http clients). */
  lookup: LookupFunction
  /** Whether a connection to this IP address (canonical IPv4 or IPv6 text) is allowed. */
  allows(address: string): boolean
  /**
   * node:http / node:https agents with the same check (IP literals before connecting, names in the lookup), for
   * clients built on them, such as `ws` (`new WebSocket(url, { agent: guard.httpsAgent })`).
   */
  httpAgent: HttpAgent
  httpsAgent: HttpsAgent
}

/** A refused outgoing connection. The message names the address and, when there is one, the host name. */
export class EgressDeniedError extends Error {
  readonly code = 'EGRESS_DENIED'
  readonly address: string
  readonly hostname?: string

  constructor(
    address: string,
    hostname?: string,
  ) {
    super(
      hostname && hostname !== address
        ? `Refused to connect to ${hostname} (${address}): not a public address`
        : `Refused to connect to ${address}: not a public address`,
    )
    this.address = address
    this.hostname = hostname
    this.name = 'EgressDeniedError'
  }
}

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number]

/** Parses one CIDR (`127.0.0.0/8`, `fd00::/8`) or throws. */
export function parseCidr(text: string): Cidr {
  return ipaddr.parseCIDR(text.trim())
}

// The IPv4 address some IPv6 forms carry, which is what the packet reaches: IPv4-mapped (::ffff:a.b.c.d),
// SIIT (::ffff:0:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::/96) and 6to4 (2002:aabb:ccdd::/48).
function embeddedIPv4(ip: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = ip.parts
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff])
  const range = ip.range()
  if (range === 'ipv4Mapped' || range === 'rfc6145') return v4(p[6] as number, p[7] as number)
  if (range === '6to4') return v4(p[1] as number, p[2] as number)
  if (range === 'rfc6052' && p[2] === 0) return v4(p[6] as number, p[7] as number)
  // IPv4-compatible: the first 96 bits are zero (:: and ::1 are judged as themselves).
  if (p.slice(0, 6).every((part) => part === 0) && (p[6] as number) !== 0) return v4(p[6] as number, p[7] as number)
  return null
}

function inAny(ip: ipaddr.IPv4 | ipaddr.IPv6, ranges: Cidr[]): boolean {
  return ranges.some(([base, bits]) => base.kind() === ip.kind() && ip.match(base, bits))
}

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3')

function isPublic(ip: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  if (ip.kind() === 'ipv4') return ip.range() === 'unicast'
  const v6 = ip as ipaddr.IPv6
  const v4 = embeddedIPv4(v6)
  if (v4) return v4.range() === 'unicast'
  // Only global unicast (2000::/3) that no registry reserves: no ULA, link-local, Teredo, documentation, …
  return v6.range() === 'unicast' && v6.match(GLOBAL_UNICAST_V6)
}

export function createEgressGuard(allow: string[]): EgressGuard {
  const allowed = allow.map(parseCidr)

  function allows(address: string): boolean {
    if (isIP(address) === 0) return false
    const ip = ipaddr.parse(address)
    if (inAny(ip, allowed)) return true
    const v4 = ip.kind() === 'ipv6' ? embeddedIPv4(ip as ipaddr.IPv6) : null
    if (v4 && inAny(v4, allowed)) return true
    return isPublic(ip)
  }

  // Resolves as dns.lookup does, then keeps only the allowed addresses; none left → EgressDeniedError.
  const lookup = ((hostname: string, options: unknown, callback?: unknown) => {
    const cb = (typeof options === 'function' ? options : callback) as (error: Error | null, address: string | LookupAddress[], family?: number) => void
    const opts = (typeof options === 'object' && options !== null ? options : typeof options === 'number' ? { family: options } : {}) as { all?: boolean }
    dnsLookup(hostname, { ...opts, all: true }, (error, addresses) => {
      if (error) return cb(error, opts.all ? [] : '', 0)
      const usable = addresses.filter((a) => allows(a.address))
      if (usable.length === 0) {
        return cb(new EgressDeniedError(addresses[0]?.address ?? hostname, hostname), opts.all ? [] : '', 0)
      }
      if (opts.all) return cb(null, usable)
      const first = usable[0] as LookupAddress
      cb(null, first.address, first.family)
    })
  }) as LookupFunction

  // undici is loaded, and its dispatcher made, at the first outgoing call rather than at start-up.
  let undici: Promise<{ dispatcher: Dispatcher; fetch: typeof import('undici').fetch; request: typeof import('undici').request }> | undefined
  const loadUndici = () =>
    (undici ??= import('undici').then(({ Agent, buildConnector, fetch, request }) => {
      // net.connect skips `lookup` for IP literals, so literals are checked here, before any socket exists.
      const connector = buildConnector({ lookup } as import('undici').buildConnector.BuildOptions)
      const dispatcher = new Agent({
        connect: (options, callback) => {
          if (isIP(options.hostname) !== 0 && !allows(options.hostname)) {
            callback(new EgressDeniedError(options.hostname), null)
            return
          }
          connector(options, callback)
        },
      })
      return { dispatcher, fetch, request }
    }))

  const guardedFetch = async (input: Parameters<typeof fetch>[0], init?: RequestInit): Promise<Response> => {
    // undici's fetch knows only its own Request class: a global Request is passed on as its parts.
    if (typeof input === 'object' && !(input instanceof URL)) {
      const request = input as Request
      const body = request.body ? await request.arrayBuffer() : undefined
      init = { method: request.method, headers: request.headers, signal: request.signal, ...(body ? { body } : {}), ...init }
      input = request.url
    }
    const { dispatcher, fetch: undiciFetch } = await loadUndici()
    try {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      return (await undiciFetch(input, { ...(init as any), redirect: 'manual', dispatcher })) as unknown as Response
    } catch (error) {
      // undici wraps connection failures in TypeError('fetch failed'); a refusal is surfaced as itself.
      const cause = (error as { cause?: unknown }).cause
      if (cause instanceof EgressDeniedError) throw cause
      throw error
    }
  }

  // node's Agent calls createConnection(options, callback): an error passed to the callback fails the request.
  type Connect = (options: { host?: string | null; lookup?: LookupFunction }, callback: (error: Error | null, socket?: Socket) => void) => Socket | undefined
  function guardConnect(connect: Connect): Connect {
    return (options, callback) => {
      const host = options.host ?? ''
      if (isIP(host) !== 0 && !allows(host)) {
        process.nextTick(() => callback(new EgressDeniedError(host)))
        return undefined
      }
      return connect({ ...options, lookup }, callback)
    }
  }
  const agentOptions: AgentOptions = { keepAlive: true }
  const httpAgent = new HttpAgent(agentOptions)
  const httpsAgent = new HttpsAgent(agentOptions)
  for (const agent of [httpAgent, httpsAgent]) {
    const connect = (agent as unknown as { createConnection: Connect }).createConnection.bind(agent)
    ;(agent as unknown as { createConnection: Connect }).createConnection = guardConnect(connect)
  }

  // undici 7's request follows no redirect (that takes its redirect interceptor, which this dispatcher lacks).
  const request = async (url: string, options: GuardedRequestOptions) => {
    const { dispatcher, request: undiciRequest } = await loadUndici()
    return (await undiciRequest(url, { ...options, dispatcher })) as Dispatcher.ResponseData
  }

  return { fetch: guardedFetch as typeof fetch, request, lookup, allows, httpAgent, httpsAgent }
}
