/**
 * The heartbeat a worker thread publishes for the watchdog on the main thread (see
 * `startWorkerThread`), as `Int32Array` slots of a `SharedArrayBuffer`: `calls` counts the calls
 * into untrusted code that have started, `busy` is 1 while the thread works (so waiting for the
 * main thread never looks like a stall).
 */
export const heartbeatSlot = { calls: 0, busy: 1 } as const

export const makeHeartbeatBuffer = () => new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT)

/** The thread's side of the heartbeat. */
export const threadHeartbeat = (buffer: SharedArrayBuffer) => {
  const beats = new Int32Array(buffer)
  return {
    setBusy: (busy: boolean) => Atomics.store(beats, heartbeatSlot.busy, busy ? 1 : 0),
    /** Counts one more call started. */
    call: () => Atomics.add(beats, heartbeatSlot.calls, 1)
  }
}
