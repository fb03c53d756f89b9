import { expect, layer } from "@effect/vitest"
import { platformOptions, rateLimitPolicyPerMinute } from "@trading-platform/core"
import { Duration, Effect, TestClock } from "effect"
import { connect } from "node:net"
import { openWs, StreamTestServer } from "../support/StreamClients.js"
import { baseUrl, call, signUp } from "../support/TestServer.js"

const wait = <A>(promise: () => Promise<A>) => Effect.promise(promise)

const websocket = {
  ...platformOptions().websocket,
  maxQueuedMessages: 3,
  maxUnauthenticatedPerIp: 2,
  authTimeout: Duration.seconds(2)
}
const rateLimits = rateLimitPolicyPerMinute({ auth: 10_000, read: 10_000, write: 10_000 })

/**
 * Upgrades a bare TCP connection to `/api/ws` and sends only the header of a text frame announcing
 * `length` bytes, none of which follow; answers the server's first frame (its close, if it refuses).
 */
const announceFrame = (base: string, length: number, ip: string) =>
  new Promise<Buffer>((resolve, reject) => {
    const { hostname, port } = new URL(base)
    const socket = connect(Number(port), hostname)
    socket.on("error", reject)
    socket.write(
      "GET /api/ws HTTP/1.1\r\nHost: test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
        `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nX-Forwarded-For: ${ip}\r\n\r\n`
    )
    let received = Buffer.alloc(0)
    let upgraded = false
    socket.on("data", (chunk) => {
      received = Buffer.concat([received, chunk])
      const end = received.indexOf("\r\n\r\n")
      if (end === -1) return
      if (!upgraded) {
        upgraded = true
        expect(received.subarray(0, end).toString()).toContain("101 Switching Protocols")
        // FIN + text, masked, 64-bit length, then a zero masking key.
        const header = Buffer.alloc(14)
        header[0] = 0x81
        header[1] = 0x80 | 127
        header.writeBigUInt64BE(BigInt(length), 2)
        socket.write(header)
      }
      const frame = received.subarray(end + 4)
      if (frame.length >= 2 && frame.length >= 2 + frame[1]!) {
        socket.destroy()
        resolve(frame)
      }
    })
  })

/** Each test comes from its own address (X-Forwarded-For, trusted here), so the per-address cap is its own. */
const from = (ip: string) => ({ "x-forwarded-for": ip })

layer(StreamTestServer({ config: { rateLimits, websocket, trustProxy: true } }), { timeout: "120 seconds" })(
  "WebSocket /api/ws limits",
  (it) => {
    it.effect("a message over WS_MAX_MESSAGE_BYTES from an unauthenticated socket closes it with 1009; the server stays up", () =>
      Effect.gen(function*() {
        expect(websocket.maxMessageBytes).toBe(64 * 1024)
        const base = yield* baseUrl
        const big = yield* openWs("", from("10.0.0.1"))
        expect(yield* wait(() => big.refused)).toBeUndefined()
        big.send("x".repeat(2 * 1024 * 1024))
        expect((yield* wait(() => big.closed)).code).toBe(1009)

        // A message of exactly the cap is read: not being an auth message, it closes with 1008.
        const atCap = yield* openWs("", from("10.0.0.1"))
        atCap.send(JSON.stringify({ type: "auth", token: "t".repeat(64 * 1024 - 30) }).padEnd(64 * 1024, " "))
        expect(yield* wait(() => atCap.next())).toMatchObject({ type: "error", code: "unauthorized" })
        expect((yield* wait(() => atCap.closed)).code).toBe(1008)

        // A frame announcing 95 MiB is refused on its header alone, nothing of it buffered.
        const refused = yield* wait(() => announceFrame(base, 95 * 1024 * 1024, "10.0.0.1"))
        expect(refused[0]).toBe(0x88)
        expect(refused.readUInt16BE(2)).toBe(1009)

        expect((yield* call("GET", "/api/health")).status).toBe(200)
        const user = yield* signUp("afterbig")
        const ws = yield* openWs(`?session_token=${user.token}`)
        ws.send({ type: "ping" })
        expect(yield* wait(() => ws.next())).toEqual({ type: "pong", channel: null })
        ws.socket.close()
      }))

    it.effect("an unauthenticated socket is closed with 1008 once WS_AUTH_TIMEOUT_S has passed", () =>
      Effect.gen(function*() {
        const silent = yield* openWs("", from("10.0.0.2"))
        expect(yield* wait(() => silent.refused)).toBeUndefined()
        yield* TestClock.adjust("2 seconds")
        expect(yield* wait(() => silent.next())).toMatchObject({
          type: "error",
          code: "unauthorized",
          error: "No token within 2s"
        })
        expect(yield* wait(() => silent.closed)).toEqual({ code: 1008, reason: "Authentication timeout" })
      }))

    it.effect("past WS_MAX_UNAUTHENTICATED_PER_IP sockets of one address, the next is closed with 1013", () =>
      Effect.gen(function*() {
        // One stream per token: a user for each socket that authenticates.
        const [user, firstUser, fourthUser] = [yield* signUp("perip"), yield* signUp("perip1"), yield* signUp("perip4")]
        const first = yield* openWs("", from("10.0.0.3"))
        const second = yield* openWs("", from("10.0.0.3"))
        const third = yield* openWs("", from("10.0.0.3"))
        expect(yield* wait(() => third.next())).toMatchObject({ type: "error", code: "rate_limited" })
        expect(yield* wait(() => third.closed)).toEqual({ code: 1013, reason: "Too many unauthenticated sockets" })
        // Another address is not held back; a token in the request is never counted.
        const elsewhere = yield* openWs("", from("10.0.0.4"))
        const withToken = yield* openWs(`?session_token=${user.token}`, from("10.0.0.3"))
        withToken.send({ type: "ping" })
        expect(yield* wait(() => withToken.next())).toEqual({ type: "pong", channel: null })
        // A socket that authenticates gives its place back.
        first.send({ type: "auth", token: firstUser.token })
        first.send({ type: "ping" })
        expect(yield* wait(() => first.next())).toEqual({ type: "pong", channel: null })
        const fourth = yield* openWs("", from("10.0.0.3"))
        fourth.send({ type: "auth", token: fourthUser.token })
        fourth.send({ type: "ping" })
        expect(yield* wait(() => fourth.next())).toEqual({ type: "pong", channel: null })
        for (const ws of [first, second, fourth, elsewhere, withToken]) ws.socket.close()
      }))

    it.effect("past WS_MAX_QUEUED_MESSAGES waiting to be handled, an error frame and close 1013", () =>
      Effect.gen(function*() {
        const user = yield* signUp("inbox")
        const ws = yield* openWs(`?session_token=${user.token}`, from("10.0.0.5"))
        ws.send({ type: "ping" })
        expect(yield* wait(() => ws.next())).toEqual({ type: "pong", channel: null })
        // Sent in one go, they arrive together: one is being handled, three wait, the fifth has no room.
        for (let i = 0; i < 10; i++) ws.send({ type: "ping" })
        expect(yield* wait(() => ws.next((m) => m.type === "error"))).toMatchObject({ code: "rate_limited" })
        expect(yield* wait(() => ws.closed)).toEqual({ code: 1013, reason: "Too many messages waiting" })
      }))
  }
)
