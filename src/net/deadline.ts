// A deadline for one outgoing call: a signal that aborts after `ms`, or when `parent` (the process's shutdown)
// aborts, and a `clear()` to call when the call is over.
//
// Not AbortSignal.timeout() inside AbortSignal.any(): Node holds a timeout signal only weakly (its timer keeps a
// WeakRef), and a composite holds its sources weakly too, so a garbage collection between the call and its
// deadline can drop the timeout signal and the deadline never comes (Node 20–24, measured with --expose-gc:
// a fetch to a server that never answers then hangs for ever). Here the timer's closure holds the controller.
export interface Deadline {
  signal: AbortSignal
  /** Whether the time ran out (as opposed to the parent aborting). */
  readonly expired: boolean
  /** Stops the timer and lets go of the parent; call it when the call ends, however it ends. */
  clear(): void
}

export function deadline(ms: number, parent?: AbortSignal): Deadline {
  const controller = new AbortController()
  let expired = false
  const timer = setTimeout(() => {
    expired = true
    controller.abort(new DOMException(`no answer within ${ms} ms`, 'TimeoutError'))
  }, ms)
  // The timer keeps the controller alive until it fires or is cleared; it does not keep the process alive.
  timer.unref()
  const onParentAbort = () => controller.abort(parent?.reason)
  if (parent?.aborted) controller.abort(parent.reason)
  else parent?.addEventListener('abort', onParentAbort, { once: true })
  return {
    signal: controller.signal,
    get expired() {
      return expired
    },
    clear() {
      clearTimeout(timer)
      parent?.removeEventListener('abort', onParentAbort)
    },
  }
}
