import { describe, expect, it, layer } from "@effect/vitest"
import { MarketHub } from "@trading-platform/core"
import { Effect, Exit, Layer, Scope, Supervisor, TestClock } from "effect"
import { evaluate, openSse, poolMetAt, StreamTestServer, until } from "../support/StreamClients.js"
import { call, expectError, signUp } from "../support/TestServer.js"

const tracked = Effect.runSync(Supervisor.track)

/** Fibers of the server that are still running (request fibers, streams, pollers). */
const liveFibers = Effect.map(tracked.value, (fibers) => fibers.length)

layer(StreamTestServer().pipe(Layer.provide(Supervisor.addSupervisor(tracked))), { timeout: "120 seconds" })(
  "market-intelligence stream",
  (it) => {
    it.effect("answers a snapshot of the symbols first, then an update when a price moves", () =>
      Effect.gen(function*() {
        const user = yield* signUp("mi")
        const sse = yield* openSse("?symbols=BTC,eth", { token: user.token })
        expect(sse.status).toBe(200)
        expect(sse.headers.get("content-type")).toContain("text/event-stream")
        const snapshot = yield* Effect.promise(() => sse.next())
        expect(snapshot.event).toBe("snapshot")
        expect(snapshot.id).toMatch(/^\d+-1$/)
        expect(Object.keys(snapshot.data.prices).sort()).toEqual(["BTC", "ETH"])
        expect(snapshot.data.prices.BTC.price).toBeGreaterThan(0)
        expect(snapshot.data.exchange).toBe("venue1")
        const flow = snapshot.data.flow.BTC
        expect(flow.taker_buy_volume + flow.taker_sell_volume).toBeGreaterThan(0)
        expect(flow.open_interest).toBe(snapshot.data.prices.BTC.open_interest)
        expect(snapshot.data.triggers).toEqual([])

        // The simulated price moves each minute.
        yield* TestClock.adjust("1 minute")
        const update = yield* Effect.promise(() => sse.next("update"))
        expect(update.data.kind).toBe("price")
        expect(["BTC", "ETH"]).toContain(update.data.symbol)
        expect(update.data.price).not.toBe(snapshot.data.prices[update.data.symbol].price)
        expect(Number(update.id.split("-")[1])).toBeGreaterThan(1)
        sse.close()
      }))

    it.effect("sends a heartbeat every 15 s of the clock, each event with a new id", () =>
      Effect.gen(function*() {
        const user = yield* signUp("hb")
        const sse = yield* openSse("?symbols=SOL", { token: user.token })
        const snapshot = yield* Effect.promise(() => sse.next("snapshot"))
        yield* TestClock.adjust("15 seconds")
        const beat = yield* Effect.promise(() => sse.next("heartbeat"))
        expect(beat.data.timestamp).toBe(new Date(yield* TestClock.currentTimeMillis).toISOString())
        expect(beat.id).not.toBe(snapshot.id)
        yield* TestClock.adjust("15 seconds")
        const second = yield* Effect.promise(() => sse.next("heartbeat"))
        expect(second.id).not.toBe(beat.id)
        sse.close()
      }))

    it.effect("a trigger of the caller's arrives as an update; another user's does not", () =>
      Effect.gen(function*() {
        const user = yield* signUp("trig")
        const other = yield* signUp("other")
        const sse = yield* openSse("?symbols=BTC", { token: user.token })
        const snapshot = yield* Effect.promise(() => sse.next("snapshot"))
        expect(snapshot.id).toBe("0-1")
        const otherPool = yield* poolMetAt(other.token, ["BTC"])
        const pool = yield* poolMetAt(user.token, ["ETH"])
        yield* evaluate
        const update = yield* Effect.promise(() => sse.next("update"))
        expect(update.data.kind).toBe("trigger")
        expect(update.data.trigger).toMatchObject({ pool_id: pool, user_id: user.id, symbol: "ETH" })
        expect(update.id).toBe(`${update.data.trigger.id}-2`)
        expect(otherPool).not.toBe(pool)
        sse.close()
        // The next snapshot lists it among the recent triggers.
        const again = yield* openSse("?symbols=BTC", { token: user.token })
        const next = yield* Effect.promise(() => again.next("snapshot"))
        expect(next.data.triggers.map((t: any) => t.id)).toEqual([update.data.trigger.id])
        again.close()
      }))

    it.effect("reconnecting with Last-Event-ID replays the triggers fired in between, then goes on live", () =>
      Effect.gen(function*() {
        const user = yield* signUp("resume")
        yield* poolMetAt(user.token, ["BTC"])
        yield* evaluate
        const sse = yield* openSse("?symbols=BTC", { token: user.token })
        const snapshot = yield* Effect.promise(() => sse.next("snapshot"))
        expect(snapshot.data.triggers).toHaveLength(1)
        sse.close()
        // While away: two more triggers.
        yield* poolMetAt(user.token, ["ETH", "SOL"])
        const fired = (yield* evaluate).filter((t) => t.user_id === user.id)
        expect(fired).toHaveLength(2)
        const resumed = yield* openSse("?symbols=BTC", { token: user.token, lastEventId: snapshot.id })
        expect((yield* Effect.promise(() => resumed.next())).event).toBe("snapshot")
        const replayed = [yield* Effect.promise(() => resumed.next()), yield* Effect.promise(() => resumed.next())]
        expect(replayed.map((e) => e.event)).toEqual(["update", "update"])
        expect(replayed.map((e) => e.data.trigger.id)).toEqual(fired.map((t) => t.id).sort((a, b) => a - b))
        expect(replayed[1]!.id.split("-")[0]).toBe(String(replayed[1]!.data.trigger.id))
        // Resuming from the latest event replays nothing more.
        resumed.close()
        const latest = yield* openSse("?symbols=BTC", { token: user.token, lastEventId: replayed[1]!.id })
        yield* Effect.promise(() => latest.next("snapshot"))
        yield* poolMetAt(user.token, ["DOGE"])
        yield* evaluate
        const live = yield* Effect.promise(() => latest.next())
        expect(live.data.trigger.symbol).toBe("DOGE")
        latest.close()
      }))

    it.effect("unknown symbols answer 422 symbol_not_listed before the stream opens; a bad list 400", () =>
      Effect.gen(function*() {
        const user = yield* signUp("bad")
        const unknown = yield* call("GET", "/api/market-intelligence/stream?symbols=BTC,NOPE", { token: user.token })
        expectError(unknown, 422, "symbol_not_listed")
        expect(unknown.body.symbols).toEqual(["NOPE"])
        expectError(yield* call("GET", "/api/market-intelligence/stream", { token: user.token }), 400, "invalid_input")
        expectError(
          yield* call("GET", "/api/market-intelligence/stream?symbols=", { token: user.token }),
          400,
          "invalid_input"
        )
        expectError(
          yield* call("GET", "/api/market-intelligence/stream?symbols=BTC&exchange=venue9", { token: user.token }),
          400,
          "invalid_input"
        )
        // Nothing was held: a stream opens at once.
        const sse = yield* openSse("?symbols=BTC", { token: user.token })
        expect(sse.status).toBe(200)
        sse.close()
      }))

    it.effect("without a token or with a revoked one answers 401", () =>
      Effect.gen(function*() {
        expectError(yield* call("GET", "/api/market-intelligence/stream?symbols=BTC"), 401, "unauthorized")
        const user = yield* signUp("revoked")
        expect((yield* call("POST", "/api/users/logout", { token: user.token })).status).toBe(204)
        const revoked = yield* call("GET", "/api/market-intelligence/stream?symbols=BTC", { token: user.token })
        expectError(revoked, 401, "unauthorized")
        expect(revoked.body.reason).toBe("token_revoked")
      }))

    it.effect("an open stream lives while its token authenticates, and ends at the next renewal once its user is deleted", () =>
      Effect.gen(function*() {
        const user = yield* signUp("deleted")
        const sse = yield* openSse("?symbols=BTC", { token: user.token })
        yield* Effect.promise(() => sse.next("snapshot"))
        let ended = false
        void sse.ended.then(() => (ended = true))
        // Three renewals with a valid token, then the heartbeat: the stream is still open.
        yield* TestClock.adjust("15 seconds")
        yield* Effect.promise(() => sse.next("heartbeat"))
        expect(ended).toBe(false)
        const deleted = yield* call("DELETE", "/api/users/me", { token: user.token, body: { password: user.password } })
        expect(deleted.status).toBe(204)
        yield* TestClock.adjust("5 seconds")
        yield* Effect.promise(() => until("the stream to end", () => ended || undefined, 5_000))
        // The client's reconnection is refused.
        const again = yield* call("GET", "/api/market-intelligence/stream?symbols=BTC", { token: user.token })
        expectError(again, 401, "unauthorized")
        expect(again.body.reason).toBe("token_invalid")
      }))

    it.effect("a second stream on the same token answers 429 with Retry-After until the first closes", () =>
      Effect.gen(function*() {
        const user = yield* signUp("twice")
        const first = yield* openSse("?symbols=BTC", { token: user.token })
        yield* Effect.promise(() => first.next("snapshot"))
        const second = yield* call("GET", "/api/market-intelligence/stream?symbols=ETH", { token: user.token })
        expectError(second, 429, "rate_limited")
        expect(second.headers.get("retry-after")).toBe(String(second.body.retry_after))
        expect(second.body.retry_after).toBeGreaterThanOrEqual(1)
        // The same token as ?session_token= is the same token.
        expectError(
          yield* call("GET", `/api/market-intelligence/stream?symbols=ETH&session_token=${user.token}`),
          429,
          "rate_limited"
        )
        // Another token of the same user has its own lease.
        const other = yield* call("POST", "/api/users/login", { body: { email: user.email, password: user.password } })
        const third = yield* openSse("?symbols=ETH", { token: other.body.session_token })
        expect(third.status).toBe(200)
        third.close()
        first.close()
        const again = yield* openSse("?symbols=ETH", { token: user.token })
        expect(again.status).toBe(200)
        again.close()
      }))

    it.effect("a client that goes away frees its subscriptions and fibers", () =>
      Effect.gen(function*() {
        const hub = yield* MarketHub
        const user = yield* signUp("leave")
        const before = yield* liveFibers
        const sse = yield* openSse("?symbols=BTC,ETH,SOL", { token: user.token })
        yield* Effect.promise(() => sse.next("snapshot"))
        const during = yield* hub.size
        expect(during.priceWatchers).toBeGreaterThanOrEqual(3)
        expect(during.newsWatchers).toBeGreaterThanOrEqual(3)
        expect(yield* liveFibers).toBeGreaterThan(before)
        sse.close()
        yield* Effect.promise(() =>
          until("the stream to be released", () => {
            const size = Effect.runSync(hub.size)
            const fibers = Effect.runSync(liveFibers)
            return size.priceWatchers === during.priceWatchers - 3 &&
                size.newsWatchers === during.newsWatchers - 3 &&
                size.triggerWatchers === during.triggerWatchers - 1 && fibers <= before
              ? true
              : undefined
          }, 60_000)
        )
        // And its lease: the token may open a stream again.
        const again = yield* openSse("?symbols=BTC", { token: user.token })
        expect(again.status).toBe(200)
        again.close()
      }))
  }
)

describe("market-intelligence shutdown", () => {
  it.live("stopping the server ends open streams", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const server = yield* Layer.buildWithScope(StreamTestServer(), scope)
      const sse = yield* Effect.gen(function*() {
        const user = yield* signUp("stop")
        const sse = yield* openSse("?symbols=BTC", { token: user.token })
        yield* Effect.promise(() => sse.next("snapshot"))
        return sse
      }).pipe(Effect.provide(server))
      yield* Scope.close(scope, Exit.void)
      yield* Effect.promise(() => sse.ended)
    }), 120_000)
})
