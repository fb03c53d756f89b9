import type { IncomingMessage } from "node:http"

interface Receiver {
  _maxPayload?: unknown
  once?: (event: string, listener: () => void) => unknown
}

/** What of `ws`'s WebSocket the platform's socket does not expose. */
export interface UpgradedSocket {
  readonly _receiver?: Receiver
  readonly readyState: number
  readonly bufferedAmount: number
  send(data: string): void
  close(code: number, reason: string): void
}

/** The `ws` WebSocket upgraded from `request`, which `ws` keeps on the TCP socket. */
export const webSocketOf = (request: IncomingMessage): UpgradedSocket | undefined => {
  const socket = request.socket as unknown as Record<symbol, UpgradedSocket | undefined>
  const key = Object.getOwnPropertySymbols(socket).find((symbol) => symbol.description === "websocket")
  return key === undefined ? undefined : socket[key]
}

/** The frame reader `ws` keeps on the TCP socket of the WebSocket upgraded from `request`. */
const receiverOf = (request: IncomingMessage): Receiver | undefined => webSocketOf(request)?._receiver

/**
 * Caps each message the WebSocket upgraded from `request` accepts at `maxBytes`: `ws` refuses a
 * frame whose announced length takes its message past the cap as soon as it reads the frame's
 * header, before buffering it, and closes the socket with 1009. The platform's WebSocket server
 * keeps `ws`'s default (100 MiB) and takes no options, so the cap goes on the connection itself,
 * which `ws` keeps on the upgraded TCP socket. Answers whether it found the connection.
 */
export const capIncomingMessages = (request: IncomingMessage, maxBytes: number): boolean => {
  const receiver = receiverOf(request)
  if (receiver === undefined || typeof receiver._maxPayload !== "number") return false
  receiver._maxPayload = maxBytes
  return true
}

/**
 * Calls `f` when the client's close frame arrives on the WebSocket upgraded from `request`: the
 * client is done with it then, a round trip before the socket's `close` event (which waits for the
 * closing handshake and the TCP connection). Answers whether it found the connection.
 */
export const onCloseFrame = (request: IncomingMessage, f: () => void): boolean => {
  const receiver = receiverOf(request)
  if (receiver === undefined || typeof receiver.once !== "function") return false
  receiver.once("conclude", f)
  return true
}
