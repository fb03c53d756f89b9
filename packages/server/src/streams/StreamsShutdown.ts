import { MarketHub } from "@trading-platform/core"
import { Effect, Layer } from "effect"

/**
 * Ends every open stream (SSE responses end, WebSockets close with 1001) when released. Node's
 * `server.close()` waits for open responses, so this layer must be released before the HTTP
 * server: build it after the server (provide it to `HttpApiBuilder.serve`).
 */
export const EndStreamsOnShutdown = Layer.scopedDiscard(
  Effect.flatMap(MarketHub, (hub) => Effect.addFinalizer(() => hub.closeAll))
)
