import { HttpServerRequest } from "@effect/platform"
import { Effect, Option, type Scope } from "effect"
import { IncomingMessage } from "node:http"

/**
 * Calls `f` (at most once) the moment the client of the request in context goes away, until the
 * scope closes: its connection ends or closes (`node:http`, where an upgraded WebSocket keeps the
 * same connection), or the fetch-style request is aborted. It runs in the event that tells, before
 * the platform's fiber hears of it, so a client's next request finds what it released already let go.
 */
export const onClientGone = (f: () => void): Effect.Effect<void, never, Scope.Scope> =>
  Effect.flatMap(Effect.serviceOption(HttpServerRequest.HttpServerRequest), (request) => {
    if (Option.isNone(request)) return Effect.void
    let called = false
    const gone = () => {
      if (called) return
      called = true
      f()
    }
    const source = request.value.source
    if (source instanceof IncomingMessage) {
      const socket = source.socket
      return Effect.acquireRelease(
        Effect.sync(() => {
          if (socket.destroyed || socket.readableEnded) return gone()
          socket.once("end", gone).once("close", gone)
        }),
        () => Effect.sync(() => socket.off("end", gone).off("close", gone))
      )
    }
    if (source instanceof Request) {
      const signal = source.signal
      return Effect.acquireRelease(
        Effect.sync(() => {
          if (signal.aborted) return gone()
          signal.addEventListener("abort", gone, { once: true })
        }),
        () => Effect.sync(() => signal.removeEventListener("abort", gone))
      )
    }
    return Effect.void
  })
