import { Effect } from "effect"

/**
 * Waits for one turn of the event loop, so the I/O that arrived meanwhile runs. A loop of queries
 * resumes in microtasks, ahead of any request waiting on the socket; on embedded storage (one
 * connection, on the main thread) it would take every turn of the connection until it ends.
 */
export const letOthersIn = Effect.async<void>((resume) => {
  const turn = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(turn))
})
