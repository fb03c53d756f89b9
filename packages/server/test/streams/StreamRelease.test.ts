import { describe, expect, layer } from "@effect/vitest"
import { rateLimitPolicyPerMinute } from "@trading-platform/core"
import { testRedisUrl } from "@trading-platform/core/testing"
import { Effect, Option, Redacted } from "effect"
import { openSse, openWs, StreamTestServer } from "../support/StreamClients.js"
import { signUp } from "../support/TestServer.js"

// Each round closes a stream and opens the next at once: a release that waited for the stream's
// fiber to wind down loses the race to the next request now and then, so it is run a few times.
const rounds = 5
const rateLimits = rateLimitPolicyPerMinute({ auth: 10_000, read: 10_000, write: 10_000 })
const wait = <A>(promise: () => Promise<A>) => Effect.promise(promise)

const releaseTests = (store: string, redisUrl: Option.Option<Redacted.Redacted>) =>
  layer(StreamTestServer({ config: { rateLimits, redisUrl } }), { timeout: "120 seconds" })(
    `a closed stream's lease is let go at once (${store})`,
    (it) => {
      it.effect("SSE: closed by the client, the next stream on the token opens on the first try", () =>
        Effect.gen(function*() {
          const user = yield* signUp("relsse")
          let sse = yield* openSse("?symbols=BTC", { token: user.token })
          for (let round = 0; round < rounds; round++) {
            expect(sse.status, `round ${round}`).toBe(200)
            // The token's one stream is open: another is refused.
            expect((yield* openSse("?symbols=ETH", { token: user.token })).status).toBe(429)
            sse.close()
            sse = yield* openSse("?symbols=BTC", { token: user.token })
          }
          expect(sse.status).toBe(200)
          yield* wait(() => sse.next("snapshot"))
          sse.close()
        }))

      it.effect("WebSocket: closed by the client, the next socket on the token opens on the first try", () =>
        Effect.gen(function*() {
          const user = yield* signUp("relws")
          for (let round = 0; round < rounds; round++) {
            const ws = yield* openWs(`?session_token=${user.token}`)
            expect(yield* wait(() => ws.refused), `round ${round}`).toBeUndefined()
            const second = yield* openWs(`?session_token=${user.token}`)
            expect(yield* wait(() => second.refused)).toBe(429)
            ws.socket.close(1000)
          }
          // A token given in the first message holds the lease the same way.
          for (let round = 0; round < rounds; round++) {
            const ws = yield* openWs()
            ws.send({ type: "auth", token: user.token })
            ws.send({ type: "ping" })
            expect(yield* wait(() => ws.next()), `round ${round}`).toEqual({ type: "pong", channel: null })
            ws.socket.close(1000)
          }
          const last = yield* openWs(`?session_token=${user.token}`)
          expect(yield* wait(() => last.refused)).toBeUndefined()
          last.socket.close(1000)
        }))

      it.effect("SSE then WebSocket then SSE: each opens as soon as the other is closed", () =>
        Effect.gen(function*() {
          const user = yield* signUp("relmix")
          for (let round = 0; round < rounds; round++) {
            const sse = yield* openSse("?symbols=BTC", { token: user.token })
            expect(sse.status, `round ${round}`).toBe(200)
            sse.close()
            const ws = yield* openWs(`?session_token=${user.token}`)
            expect(yield* wait(() => ws.refused), `round ${round}`).toBeUndefined()
            ws.socket.close(1000)
          }
        }))
    }
  )

releaseTests("in memory", Option.none())
describe.runIf(testRedisUrl !== undefined)("with Redis", () => {
  releaseTests("Redis", Option.some(Redacted.make(testRedisUrl ?? "")))
})
if (testRedisUrl === undefined) console.warn("stream release with Redis needs TEST_REDIS_URL: SKIPPED")
