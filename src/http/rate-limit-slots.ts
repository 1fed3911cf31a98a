// Fair shares of the connection slots (TANDEM_MAX_CONNECTIONS). A Server-Sent Events stream and a long-polling task
// claim each hold a connection for long: one key, or one peer address, could hold every slot and leave other
// requests — /healthz included — with an empty reply. So each principal (all its keys) and each peer may hold at most
// a share of them at once (by default an eighth and a quarter, TANDEM_MAX_STREAMS_PER_KEY / _PER_PEER); one more is a
// 429 problem, answered with `Connection: close` so that the refused request gives its slot back at once.
// Counted per instance, in memory: slots are a property of this process's sockets.
import { AppError } from './problem.js'

export interface HeldRequestLimits {
  perPrincipal: number
  perPeer: number
}

// A held request usually ends within seconds (a claim's wait) or on the client's close: try again shortly.
const RETRY_AFTER_S = 5

export class HeldRequests {
  private readonly byPrincipal = new Map<string, number>()
  private readonly byPeer = new Map<string, number>()

  readonly limits: HeldRequestLimits

  constructor(limits: HeldRequestLimits) {
    this.limits = limits
  }

  /**
   * Takes a slot for a long-lived request of this principal from this peer, or throws the 429. Returns the function
   * that gives the slot back (calling it again does nothing).
   */
  take(principalId: string, peer: string): () => void {
    const principalHeld = this.byPrincipal.get(principalId) ?? 0
    const peerHeld = this.byPeer.get(peer) ?? 0
    if (principalHeld >= this.limits.perPrincipal) throw tooMany(`This key already holds ${principalHeld} open event streams and long-polling claims, the most one key may hold at once (TANDEM_MAX_STREAMS_PER_KEY); close one, or claim without waitSeconds.`)
    if (peerHeld >= this.limits.perPeer) throw tooMany(`Your address already holds ${peerHeld} open event streams and long-polling claims, the most one address may hold at once (TANDEM_MAX_STREAMS_PER_PEER); close one first.`)
    this.byPrincipal.set(principalId, principalHeld + 1)
    this.byPeer.set(peer, peerHeld + 1)
    let released = false
    return () => {
      if (released) return
      released = true
      decrement(this.byPrincipal, principalId)
      decrement(this.byPeer, peer)
    }
  }

  /** Slots held now, by everyone (for tests and metrics). */
  get held(): number {
    let total = 0
    for (const count of this.byPrincipal.values()) total += count
    return total
  }
}

function decrement(counts: Map<string, number>, key: string): void {
  const next = (counts.get(key) ?? 1) - 1
  if (next <= 0) counts.delete(key)
  else counts.set(key, next)
}

function tooMany(detail: string): AppError {
  return new AppError('rate-limited', detail, undefined, { 'retry-after': String(RETRY_AFTER_S), connection: 'close' })
}

/** The defaults: a principal an eighth of the connection slots, a peer a quarter (at least one each). */
export function defaultHeldLimits(maxConnections: number): HeldRequestLimits {
  return { perPrincipal: Math.max(1, Math.floor(maxConnections / 8)), perPeer: Math.max(1, Math.floor(maxConnections / 4)) }
}
