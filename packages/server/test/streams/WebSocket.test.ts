import { describe, expect, it, layer } from "@effect/vitest"
import { MarketHub, rateLimitPolicyPerMinute } from "@trading-platform/core"
import { Effect, Exit, Layer, Scope, Supervisor, TestClock } from "effect"
import { marketNow, tradingProgram } from "../support/Backtests.js"
import { evaluate, openSse, openWs, poolMetAt, StreamTestServer, until } from "../support/StreamClients.js"
import { call, expectError, signUp } from "../support/TestServer.js"

const rateLimits = {
  ...rateLimitPolicyPerMinute({ auth: 10_000, read: 10_000, write: 10_000 }),
  websocket_messages_per_min: 20
}

const wait = <A>(promise: () => Promise<A>) => Effect.promise(promise)

const tracked = Effect.runSync(Supervisor.track)
const liveFibers = Effect.map(tracked.value, (fibers) => fibers.length)

// At an instant with market data behind it, so backtests may be submitted.
layer(
  StreamTestServer({ config: { rateLimits } }).pipe(
    Layer.provide(Layer.effectDiscard(TestClock.setTime(marketNow))),
    Layer.provide(Supervisor.addSupervisor(tracked))
  ),
  { timeout: "120 seconds" }
)("WebSocket /api/ws", (it) => {
  it.effect("with the token in the query: ping, subscribe to prices, an event on its channel when the price moves", () =>
    Effect.gen(function*() {
      const user = yield* signUp("ws")
      const ws = yield* openWs(`?session_token=${user.token}`)
      expect(yield* wait(() => ws.refused)).toBeUndefined()
      ws.send({ type: "ping" })
      expect(yield* wait(() => ws.next())).toEqual({ type: "pong", channel: null })
      ws.send({ type: "subscribe", channel: "prices:btc" })
      expect(yield* wait(() => ws.next())).toEqual({ type: "subscribed", channel: "prices:btc" })
      // The first round sends the current price, each later one a moved price.
      yield* TestClock.adjust("1 second")
      const first = yield* wait(() => ws.next((m) => m.type === "event"))
      expect(first).toMatchObject({ channel: "prices:BTC", data: { kind: "price", symbol: "BTC", exchange: "venue1" } })
      yield* TestClock.adjust("1 minute")
      const moved = yield* wait(() => ws.next((m) => m.type === "event"))
      expect(moved.channel).toBe("prices:BTC")
      expect(moved.data.price).not.toBe(first.data.price)
      ws.send({ type: "unsubscribe", channel: "prices:btc" })
      expect(yield* wait(() => ws.next((m) => m.type === "unsubscribed"))).toEqual({
        type: "unsubscribed",
        channel: "prices:btc"
      })
      ws.socket.close(1000)
      expect((yield* wait(() => ws.closed)).code).toBe(1000)
    }))

  it.effect("a client that closes its socket frees its subscriptions, its lease and its fibers", () =>
    Effect.gen(function*() {
      const hub = yield* MarketHub
      const user = yield* signUp("wsleave")
      const before = yield* liveFibers
      const idle = yield* hub.size
      const ws = yield* openWs(`?session_token=${user.token}`)
      for (const channel of ["triggers", "prices:BTC", "news:ETH"]) {
        ws.send({ type: "subscribe", channel })
        expect(yield* wait(() => ws.next((m) => m.type === "subscribed"))).toEqual({ type: "subscribed", channel })
      }
      expect(yield* hub.size).toEqual({
        triggerWatchers: idle.triggerWatchers + 1,
        priceWatchers: idle.priceWatchers + 1,
        newsWatchers: idle.newsWatchers + 1
      })
      ws.socket.close(1000)
      expect((yield* wait(() => ws.closed)).code).toBe(1000)
      yield* wait(() =>
        until("the socket to be released", () => {
          const size = Effect.runSync(hub.size)
          return size.triggerWatchers === idle.triggerWatchers && size.priceWatchers === idle.priceWatchers &&
              size.newsWatchers === idle.newsWatchers && Effect.runSync(liveFibers) <= before
            ? true
            : undefined
        }, 30_000)
      )
      // And its lease: the token opens a socket again.
      const again = yield* openWs(`?session_token=${user.token}`)
      expect(yield* wait(() => again.refused)).toBeUndefined()
      again.socket.close()
    }))

  it.effect("with the token as the first message; triggers of the caller arrive on the triggers channel", () =>
    Effect.gen(function*() {
      const user = yield* signUp("wsauth")
      const ws = yield* openWs()
      ws.send({ type: "auth", token: user.token })
      ws.send({ type: "subscribe", channel: "triggers" })
      expect(yield* wait(() => ws.next())).toEqual({ type: "subscribed", channel: "triggers" })
      yield* poolMetAt(user.token, ["ETH"])
      yield* evaluate
      const event = yield* wait(() => ws.next((m) => m.type === "event"))
      expect(event).toMatchObject({ channel: "triggers", data: { user_id: user.id, symbol: "ETH" } })
      ws.socket.close()
    }))

  it.effect("no token within 5 s closes with 1008; a bad token as first message closes with 1008", () =>
    Effect.gen(function*() {
      const silent = yield* openWs()
      expect(yield* wait(() => silent.refused)).toBeUndefined()
      yield* TestClock.adjust("5 seconds")
      expect(yield* wait(() => silent.next())).toMatchObject({ type: "error", code: "unauthorized" })
      expect((yield* wait(() => silent.closed)).code).toBe(1008)

      const bad = yield* openWs()
      bad.send({ type: "auth", token: "not-a-token" })
      expect(yield* wait(() => bad.next())).toMatchObject({ type: "error", code: "unauthorized" })
      expect((yield* wait(() => bad.closed)).code).toBe(1008)

      const wrongFirst = yield* openWs()
      wrongFirst.send({ type: "subscribe", channel: "triggers" })
      expect(yield* wait(() => wrongFirst.next())).toMatchObject({ type: "error", code: "unauthorized" })
      expect((yield* wait(() => wrongFirst.closed)).code).toBe(1008)
    }))

  it.effect("tokens revoked while their sockets are open: an error frame, then close 1008, at the next renewal", () =>
    Effect.gen(function*() {
      const user = yield* signUp("wsrevoked")
      const login = yield* call("POST", "/api/users/login", { body: { email: user.email, password: user.password } })
      const inQuery = yield* openWs(`?session_token=${user.token}`)
      expect(yield* wait(() => inQuery.refused)).toBeUndefined()
      const firstMessage = yield* openWs()
      firstMessage.send({ type: "auth", token: login.body.session_token })
      firstMessage.send({ type: "ping" })
      expect(yield* wait(() => firstMessage.next())).toEqual({ type: "pong", channel: null })
      // A password change revokes every token of the user.
      const changed = yield* call("POST", "/api/users/password", {
        token: user.token,
        body: { current_password: user.password, new_password: "another password 123" }
      })
      expect(changed.status).toBe(204)
      yield* TestClock.adjust("5 seconds")
      for (const ws of [inQuery, firstMessage]) {
        expect(yield* wait(() => ws.next((m) => m.type === "error"))).toEqual({
          type: "error",
          channel: null,
          code: "unauthorized",
          error: "The session token was revoked; log in again"
        })
        expect((yield* wait(() => ws.closed)).code).toBe(1008)
      }
    }))

  it.effect("a bad token in the query answers 401 before upgrading", () =>
    Effect.gen(function*() {
      const ws = yield* openWs("?session_token=nope")
      expect(yield* wait(() => ws.refused)).toBe(401)
      const plain = yield* call("GET", "/api/ws?session_token=nope")
      expectError(plain, 401, "unauthorized")
    }))

  it.effect("malformed messages get an error frame and the socket stays open", () =>
    Effect.gen(function*() {
      const user = yield* signUp("wsbad")
      const ws = yield* openWs("", { authorization: `Bearer ${user.token}` })
      ws.send("not json")
      expect(yield* wait(() => ws.next())).toMatchObject({ type: "error", code: "invalid_input", channel: null })
      ws.send({ type: "subscribe" })
      expect(yield* wait(() => ws.next())).toMatchObject({ type: "error", code: "invalid_input" })
      ws.send({ type: "subscribe", channel: "weather" })
      expect(yield* wait(() => ws.next())).toMatchObject({ type: "error", code: "invalid_input", channel: "weather" })
      ws.send({ type: "subscribe", channel: "prices:NOPE" })
      expect(yield* wait(() => ws.next())).toMatchObject({
        type: "error",
        code: "symbol_not_listed",
        channel: "prices:NOPE"
      })
      ws.send({ type: "subscribe", channel: "backtest:999999" })
      expect(yield* wait(() => ws.next())).toMatchObject({
        type: "error",
        code: "not_found",
        channel: "backtest:999999"
      })
      ws.send({ type: "ping" })
      expect(yield* wait(() => ws.next())).toEqual({ type: "pong", channel: null })
      ws.socket.close()
    }))

  it.effect("past the messages allowed a minute: an error frame, then close 1008", () =>
    Effect.gen(function*() {
      const user = yield* signUp("flood")
      const ws = yield* openWs(`?session_token=${user.token}`)
      yield* wait(() => ws.refused)
      for (let i = 0; i < 25; i++) ws.send({ type: "ping" })
      expect(yield* wait(() => ws.next((m) => m.type === "error"))).toMatchObject({ code: "rate_limited" })
      expect((yield* wait(() => ws.closed)).code).toBe(1008)
    }))

  it.effect("GET /api/ws that is no upgrade answers 400 invalid_input and leaves the token's stream free", () =>
    Effect.gen(function*() {
      const user = yield* signUp("noupgrade")
      const plain = yield* call("GET", `/api/ws?session_token=${user.token}`)
      expectError(plain, 400, "invalid_input")
      expect(plain.body.error).toMatch(/^GET \/api\/ws opens a WebSocket: send it as an upgrade/)
      const ws = yield* openWs(`?session_token=${user.token}`)
      expect(yield* wait(() => ws.refused)).toBeUndefined()
      ws.socket.close()
    }))

  it.effect("the WebSocket shares the token's one stream with the SSE stream: 429 either way", () =>
    Effect.gen(function*() {
      const user = yield* signUp("share")
      const sse = yield* openSse("?symbols=BTC", { token: user.token })
      yield* wait(() => sse.next("snapshot"))
      const ws = yield* openWs(`?session_token=${user.token}`)
      expect(yield* wait(() => ws.refused)).toBe(429)
      expectError(yield* call("GET", `/api/ws?session_token=${user.token}`), 429, "rate_limited")
      const late = yield* openWs()
      late.send({ type: "auth", token: user.token })
      expect(yield* wait(() => late.next())).toMatchObject({ type: "error", code: "rate_limited" })
      expect((yield* wait(() => late.closed)).code).toBe(1008)
      sse.close()
    }))

  it.effect("backtest:{id} sends the job's progress and final status to its owner only", () =>
    Effect.gen(function*() {
      const owner = yield* signUp("bt")
      const stranger = yield* signUp("stranger")
      const created = yield* call("POST", "/api/programs", {
        token: owner.token,
        body: { name: "p", code: tradingProgram }
      })
      expect(created.status).toBe(201)
      const program = created.body.id as number
      const submitted = yield* call("POST", `/api/programs/${program}/backtest`, {
        token: owner.token,
        body: { symbol: "BTC", timeframe: "1h", start: "2025-01-01T00:00:00Z", end: "2025-01-03T00:00:00Z" }
      })
      expect(submitted.status).toBe(202)
      const id = submitted.body.id as number
      const other = yield* openWs(`?session_token=${stranger.token}`)
      other.send({ type: "subscribe", channel: `backtest:${id}` })
      expect(yield* wait(() => other.next())).toMatchObject({
        type: "error",
        code: "forbidden",
        channel: `backtest:${id}`
      })
      other.socket.close()

      const ws = yield* openWs(`?session_token=${owner.token}`)
      ws.send({ type: "subscribe", channel: `backtest:${id}` })
      const first = yield* wait(() => ws.next((m) => m.type === "event"))
      expect(first).toMatchObject({ channel: `backtest:${id}`, data: { id, status: "queued", progress: 0 } })
      expect(yield* wait(() => ws.next((m) => m.type === "subscribed"))).toEqual({
        type: "subscribed",
        channel: `backtest:${id}`
      })
      // Cancelling it finishes the job: the final status arrives.
      expect((yield* call("POST", `/api/programs/backtest/${id}/cancel`, { token: owner.token })).status).toBe(200)
      yield* TestClock.adjust("1 second")
      expect(yield* wait(() => ws.next((m) => m.type === "event"))).toMatchObject({ data: { id, status: "cancelled" } })
      ws.socket.close()
    }))
})

describe("WebSocket shutdown", () => {
  it.live("stopping the server closes open sockets with 1001", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const server = yield* Layer.buildWithScope(StreamTestServer(), scope)
      const ws = yield* Effect.gen(function*() {
        const user = yield* signUp("bye")
        const ws = yield* openWs(`?session_token=${user.token}`)
        ws.send({ type: "ping" })
        yield* wait(() => ws.next())
        return ws
      }).pipe(Effect.provide(server))
      yield* Scope.close(scope, Exit.void)
      expect((yield* wait(() => ws.closed)).code).toBe(1001)
    }), 120_000)
})
