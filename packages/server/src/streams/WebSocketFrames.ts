import type { IncomingMessage } from "node:http"

interface UpgradedSocket {
  readonly _receiver?: { _maxPayload?: unknown }
}

/**
 * Caps each message the WebSocket upgraded from `request` accepts at `maxBytes`: `ws` refuses a
 * frame whose announced length takes its message past the cap as soon as it reads the frame's
 * header, before buffering it, and closes the socket with 1009. The platform's WebSocket server
 * keeps `ws`'s default (100 MiB) and takes no options, so the cap goes on the connection itself,
 * which `ws` keeps on the upgraded TCP socket. Answers whether it found the connection.
 */
export const capIncomingMessages = (request: IncomingMessage, maxBytes: number): boolean => {
  const socket = request.socket as unknown as Record<symbol, UpgradedSocket | undefined>
  const key = Object.getOwnPropertySymbols(socket).find((symbol) => symbol.description === "websocket")
  const receiver = key === undefined ? undefined : socket[key]?._receiver
  if (receiver === undefined || typeof receiver._maxPayload !== "number") return false
  receiver._maxPayload = maxBytes
  return true
}
