import { describe, expect, layer } from "@effect/vitest"
import { testStorages } from "@trading-platform/core/testing"
import { Duration, Effect, TestClock } from "effect"
import { createAccount } from "../support/Accounts.js"
import { AutomationServer } from "../support/Automation.js"
import { openSse, openWs } from "../support/StreamClients.js"
import { call, expectError, signUp } from "../support/TestServer.js"

const risk = (token: string, id: number) => call("GET", `/api/account/${id}/risk`, { token })
const setRisk = (token: string, id: number, body: unknown) => call("PUT", `/api/account/${id}/risk`, { token, body })
const events = (token: string, id: number) => call("GET", `/api/account/${id}/risk/events`, { token })
const placeOrder = (token: string, id: number, body: Record<string, unknown>, headers?: Record<string, string>) =>
  call("POST", `/api/account/${id}/orders`, { token, body, ...(headers === undefined ? {} : { headers }) })
const orders = (token: string, id: number) =>
  Effect.map(call("GET", `/api/account/${id}/orders`, { token }), (r) => r.body.orders as ReadonlyArray<any>)
const positions = (token: string, id: number) =>
  Effect.map(call("GET", `/api/account/${id}/positions`, { token }), (r) => r.body.positions as ReadonlyArray<any>)

/** The quantity of `symbol` worth about `notional` USD on the accounts' venue (venue2), in its lot of 0.001. */
const quantityFor = (token: string, symbol: string, notional: number) =>
  Effect.gen(function*() {
    const reply = yield* call("POST", "/api/market/prices", { token, body: { symbols: [symbol], exchange: "venue2" } })
    expect(reply.status).toBe(200)
    const price = reply.body.prices[symbol].price as number
    return { quantity: Math.max(0.001, Math.floor((notional / price) * 1000) / 1000), price }
  })

/** A new user with a paper account of 10,000 (venue2, default leverage up to 10). */
const trader = Effect.gen(function*() {
  const user = yield* signUp("risk")
  const account = yield* createAccount(user.token, { max_leverage: 10 })
  return { token: user.token, id: account.id as number, userId: user.id }
})

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`risk firewall over ${storage.name}`, () => {
    layer(AutomationServer(storage), { timeout: "120 seconds" })((it) => {
      it.effect("GET /risk of a new account: active, no limits, equity at its capital; PUT sets limits and the mode", () =>
        Effect.gen(function*() {
          const { id, token } = yield* trader
          const first = yield* risk(token, id)
          expect(first.status).toBe(200)
          expect(first.body).toMatchObject({
            account_id: id,
            mode: "active",
            resume_at: null,
            reason: null,
            limits: {
              max_position_notional: null,
              max_total_notional: null,
              max_leverage: null,
              max_orders_per_minute: null,
              max_daily_loss: null,
              max_drawdown_percent: null
            },
            peak_equity: 10_000,
            equity: 10_000,
            daily_pnl: 0
          })
          const limited = yield* setRisk(token, id, { limits: { max_leverage: 3, max_drawdown_percent: 25 } })
          expect(limited.status).toBe(200)
          expect(limited.body.limits).toMatchObject({ max_leverage: 3, max_drawdown_percent: 25, max_daily_loss: null })
          expect(limited.body.mode).toBe("active")
          // An absent limit is kept; null removes one.
          const cleared = yield* setRisk(token, id, { limits: { max_leverage: null } })
          expect(cleared.body.limits).toMatchObject({ max_leverage: null, max_drawdown_percent: 25 })

          const until = new Date((yield* TestClock.currentTimeMillis) + 3_600_000).toISOString()
          const paused = yield* setRisk(token, id, { mode: "paused", resume_at: until })
          expect(paused.body).toMatchObject({ mode: "paused", resume_at: until, reason: "set by hand" })
          const back = yield* setRisk(token, id, { mode: "active" })
          expect(back.body).toMatchObject({ mode: "active", resume_at: null })

          const log = yield* events(token, id)
          expect(log.status).toBe(200)
          expect(log.body.events.map((e: any) => [e.from_mode, e.to_mode, e.source])).toEqual([
            ["paused", "active", "manual"],
            ["active", "paused", "manual"]
          ])
          expect(log.body.events[0]).toMatchObject({ account_id: id, reason: "set by hand" })
          const page = yield* call("GET", `/api/account/${id}/risk/events?limit=1&offset=1`, { token })
          expect(page.body.events.map((e: any) => e.to_mode)).toEqual(["paused"])
        }))

      it.effect("every failure answers the envelope: 401 without a token, 403 another user's, 404 unknown, 400 bad input", () =>
        Effect.gen(function*() {
          const { id, token } = yield* trader
          const other = yield* signUp("other")
          const order = { symbol: "BTC", side: "buy", quantity: 0.001 }
          for (
            const [method, path, body] of [
              ["GET", `/api/account/${id}/risk`, undefined],
              ["PUT", `/api/account/${id}/risk`, { mode: "paused" }],
              ["GET", `/api/account/${id}/risk/events`, undefined],
              ["POST", `/api/account/${id}/orders`, order]
            ] as const
          ) {
            expectError(yield* call(method, path, body === undefined ? {} : { body }), 401, "unauthorized")
            expectError(
              yield* call(method, path, { token: other.token, ...(body === undefined ? {} : { body }) }),
              403,
              "forbidden"
            )
            const unknown = path.replace(`/account/${id}/`, "/account/987654321/")
            expectError(
              yield* call(method, unknown, { token, ...(body === undefined ? {} : { body }) }),
              404,
              "not_found"
            )
          }
          // Another user's attempts changed nothing.
          expect((yield* risk(token, id)).body.mode).toBe("active")
          expect(yield* orders(token, id)).toEqual([])

          for (
            const [body, path] of [
              [{ mode: "sideways" }, "mode"],
              [{ limits: { max_drawdown_percent: 150 } }, "limits.max_drawdown_percent"],
              [{ limits: { max_orders_per_minute: 0 } }, "limits.max_orders_per_minute"],
              [{ limits: { max_position_notional: -5 } }, "limits.max_position_notional"],
              [{ limits: { max_leverage: 2.5 } }, "limits.max_leverage"],
              [{ resume_at: "tomorrow" }, "resume_at"],
              [{ mode: "active", resume_at: "2030-01-01T00:00:00Z" }, "resume_at"],
              [{ kill: true }, "kill"]
            ] as const
          ) {
            const reply = yield* setRisk(token, id, body)
            expectError(reply, 400, "invalid_input")
            expect(reply.body.issues.map((i: any) => i.path)).toContain(path)
          }
          for (
            const [body, path] of [
              [{ symbol: "BTC", side: "hold", quantity: 1 }, "side"],
              [{ symbol: "BTC", side: "buy", quantity: -1 }, "quantity"],
              [{ symbol: "BTC", side: "buy" }, "quantity"],
              [{ symbol: "BTC", side: "buy", quantity: 1, leverage: 1.5 }, "leverage"],
              [{ symbol: "BTC", side: "buy", quantity: 1, client_order_id: "has space" }, "client_order_id"],
              [{ symbol: "BTC", side: "buy", quantity: 1, price: 3 }, "price"]
            ] as const
          ) {
            const reply = yield* placeOrder(token, id, body)
            expectError(reply, 400, "invalid_input")
            expect(reply.body.issues.map((i: any) => i.path)).toContain(path)
          }
          expectError(
            yield* placeOrder(token, id, { symbol: "NOPE", side: "buy", quantity: 1 }),
            422,
            "symbol_not_listed"
          )
          expectError(
            yield* placeOrder(token, id, { symbol: "BTC", side: "buy", quantity: 0.001, leverage: 11 }),
            422,
            "leverage_too_high"
          )
          const poor = yield* placeOrder(token, id, { symbol: "BTC", side: "buy", quantity: 1000 })
          expectError(poor, 422, "order_rejected")
          expect(poor.body.error).toContain("insufficient free cash")
          const [rejected] = yield* orders(token, id)
          expect(rejected).toMatchObject({ id: poor.body.order_id, status: "rejected", run_id: null })
          expectError(
            yield* placeOrder(token, id, { symbol: "BTC", side: "sell", quantity: 0.001, reduce_only: true }),
            422,
            "order_rejected"
          )
        }))

      it.effect("POST /orders fills by hand on paper, as a run's order; the same Idempotency-Key answers the same order", () =>
        Effect.gen(function*() {
          const { id, token } = yield* trader
          const { quantity } = yield* quantityFor(token, "BTC", 1_000)
          const body = { symbol: "BTC", side: "buy", quantity, leverage: 2 }
          const placed = yield* placeOrder(token, id, body, { "idempotency-key": "first-order" })
          expect(placed.status).toBe(201)
          expect(placed.body).toMatchObject({
            account_id: id,
            run_id: null,
            binding_id: null,
            program_id: null,
            trigger: "run",
            route: "paper",
            exchange: "venue2",
            side: "buy",
            leverage: 2,
            status: "filled",
            error: null
          })
          expect(placed.body.quantity).toBeCloseTo(quantity, 10)
          const again = yield* placeOrder(token, id, body, { "idempotency-key": "first-order" })
          expect(again.status).toBe(201)
          expect(again.body.id).toBe(placed.body.id)
          const byField = yield* placeOrder(token, id, { ...body, client_order_id: "first-order" })
          expect(byField.body.id).toBe(placed.body.id)
          expect((yield* orders(token, id)).map((o) => o.id)).toEqual([placed.body.id])
          const [position] = yield* positions(token, id)
          expect(position).toMatchObject({ symbol: "BTC", side: "long", leverage: 2 })
          expect(position.size).toBeCloseTo(quantity, 10)
          expectError(
            yield* placeOrder(token, id, { ...body, client_order_id: "other" }, { "idempotency-key": "first-order" }),
            400,
            "invalid_input"
          )
        }))

      it.effect("max_leverage: an order above it is refused and recorded, and the account goes reduce_only", () =>
        Effect.gen(function*() {
          const { id, token } = yield* trader
          const { quantity } = yield* quantityFor(token, "BTC", 1_000)
          yield* setRisk(token, id, { limits: { max_leverage: 2 } })
          expect((yield* placeOrder(token, id, { symbol: "BTC", side: "buy", quantity, leverage: 2 })).status).toBe(201)
          const refused = yield* placeOrder(token, id, { symbol: "BTC", side: "buy", quantity, leverage: 5 })
          expectError(refused, 422, "risk_blocked")
          expect(refused.body.rule).toBe("max_leverage")
          expect(refused.body.error).toContain("leverage 5 is above the limit 2")
          const [recorded] = yield* orders(token, id)
          expect(recorded).toMatchObject({ id: refused.body.order_id, status: "rejected" })
          expect(recorded.error).toMatch(/^risk_blocked \(max_leverage\): /)
          const state = (yield* risk(token, id)).body
          expect(state.mode).toBe("reduce_only")
          expect(state.reason).toContain("max_leverage")
          const [event] = (yield* events(token, id)).body.events
          expect(event).toMatchObject({ from_mode: "active", to_mode: "reduce_only", source: "rule" })

          // reduce_only: an opening order is refused, one that shrinks the position passes.
          const opening = yield* placeOrder(token, id, { symbol: "BTC", side: "buy", quantity, leverage: 1 })
          expectError(opening, 422, "risk_blocked")
          expect(opening.body.rule).toBe("mode")
          const half = Math.floor((quantity / 2) * 1000) / 1000
          const closing = yield* placeOrder(token, id, {
            symbol: "BTC",
            side: "sell",
            quantity: half,
            reduce_only: true
          })
          expect(closing.status).toBe(201)
          expect(closing.body.status).toBe("filled")
          const [position] = yield* positions(token, id)
          expect(position.size).toBeCloseTo(quantity - half, 10)
          // A sell past the position would reverse it: not shrinking, so refused.
          const reversing = yield* placeOrder(token, id, { symbol: "BTC", side: "sell", quantity: quantity * 2 })
          expectError(reversing, 422, "risk_blocked")
        }))

      it.effect("max_position_notional and max_total_notional: an order past either is refused and leaves reduce_only", () =>
        Effect.gen(function*() {
          const a = yield* trader
          const btc = yield* quantityFor(a.token, "BTC", 1_000)
          yield* setRisk(a.token, a.id, { limits: { max_position_notional: 1_500 } })
          const small = yield* placeOrder(a.token, a.id, { symbol: "BTC", side: "buy", quantity: btc.quantity })
          expect(small.status).toBe(201)
          const big = yield* placeOrder(a.token, a.id, { symbol: "BTC", side: "buy", quantity: btc.quantity })
          expectError(big, 422, "risk_blocked")
          expect(big.body.rule).toBe("max_position_notional")
          expect((yield* risk(a.token, a.id)).body.mode).toBe("reduce_only")

          const b = yield* trader
          const eth = yield* quantityFor(b.token, "ETH", 1_000)
          yield* setRisk(b.token, b.id, { limits: { max_total_notional: 1_500, max_position_notional: 1_200 } })
          expect((yield* placeOrder(b.token, b.id, { symbol: "BTC", side: "buy", quantity: btc.quantity })).status)
            .toBe(201)
          const second = yield* placeOrder(b.token, b.id, { symbol: "ETH", side: "buy", quantity: eth.quantity })
          expectError(second, 422, "risk_blocked")
          expect(second.body.rule).toBe("max_total_notional")
          expect((yield* risk(b.token, b.id)).body.mode).toBe("reduce_only")
          expect((yield* positions(b.token, b.id)).map((p) => p.symbol)).toEqual(["BTC"])
        }))

      it.effect("orders of one account placed at once pass the notional and per-minute limits as they would one by one", () =>
        Effect.gen(function*() {
          const burst = (token: string, id: number, body: Record<string, unknown>, n: number) =>
            Effect.map(
              Effect.all(Array.from({ length: n }, () => placeOrder(token, id, body)), { concurrency: "unbounded" }),
              (replies) => replies.filter((r) => r.status === 201)
            )
          const a = yield* trader
          const btc = yield* quantityFor(a.token, "BTC", 1_000)
          yield* setRisk(a.token, a.id, { limits: { max_position_notional: 1_500 } })
          // Each alone is within the limit, any two together past it: one fills.
          expect(yield* burst(a.token, a.id, { symbol: "BTC", side: "buy", quantity: btc.quantity }, 4)).toHaveLength(1)
          const [position] = yield* positions(a.token, a.id)
          expect(position.size).toBeCloseTo(btc.quantity, 10)

          const b = yield* trader
          yield* setRisk(b.token, b.id, { limits: { max_orders_per_minute: 2 } })
          expect(yield* burst(b.token, b.id, { symbol: "BTC", side: "buy", quantity: 0.001 }, 5)).toHaveLength(2)
        }))

      it.effect("max_orders_per_minute pauses the account for a minute; once its resume_at is past, orders pass again", () =>
        Effect.gen(function*() {
          const { id, token } = yield* trader
          yield* setRisk(token, id, { limits: { max_orders_per_minute: 2 } })
          const order = { symbol: "BTC", side: "buy", quantity: 0.001 }
          expect((yield* placeOrder(token, id, order)).status).toBe(201)
          expect((yield* placeOrder(token, id, order)).status).toBe(201)
          const third = yield* placeOrder(token, id, order)
          expectError(third, 422, "risk_blocked")
          expect(third.body.rule).toBe("max_orders_per_minute")
          const now = yield* TestClock.currentTimeMillis
          const paused = (yield* risk(token, id)).body
          expect(paused.mode).toBe("paused")
          expect(Date.parse(paused.resume_at)).toBe(now + 60_000)
          // Paused: nothing passes, not even a close.
          const close = yield* placeOrder(token, id, { ...order, side: "sell", reduce_only: true })
          expectError(close, 422, "risk_blocked")
          expect(close.body.rule).toBe("mode")

          yield* TestClock.adjust("61 seconds")
          const resumed = (yield* risk(token, id)).body
          expect(resumed).toMatchObject({ mode: "active", resume_at: null })
          expect((yield* placeOrder(token, id, order)).status).toBe(201)
          expect((yield* events(token, id)).body.events.map((e: any) => [e.to_mode, e.source])).toEqual([
            ["active", "rule"],
            ["paused", "rule"]
          ])
        }))

      it.effect("paused by hand with a resume_at refuses every order until then", () =>
        Effect.gen(function*() {
          const { id, token } = yield* trader
          const until = new Date((yield* TestClock.currentTimeMillis) + 120_000).toISOString()
          expect((yield* setRisk(token, id, { mode: "paused", resume_at: until })).body.mode).toBe("paused")
          const refused = yield* placeOrder(token, id, { symbol: "BTC", side: "buy", quantity: 0.001 })
          expectError(refused, 422, "risk_blocked")
          expect(refused.body.error).toContain(`paused until ${until}`)
          yield* TestClock.adjust("1 minute")
          expectError(
            yield* placeOrder(token, id, { symbol: "BTC", side: "buy", quantity: 0.001 }),
            422,
            "risk_blocked"
          )
          yield* TestClock.adjust("61 seconds")
          expect((yield* placeOrder(token, id, { symbol: "BTC", side: "buy", quantity: 0.001 })).status).toBe(201)
          expect((yield* risk(token, id)).body.mode).toBe("active")
        }))

      it.effect("max_daily_loss: a loss since the UTC day began past it pauses the account until the next day", () =>
        Effect.gen(function*() {
          const { id, token } = yield* trader
          const { quantity } = yield* quantityFor(token, "BTC", 5_000)
          yield* setRisk(token, id, { limits: { max_daily_loss: 1 } })
          // The fill's fee and slippage cost more than 1 at once.
          expect((yield* placeOrder(token, id, { symbol: "BTC", side: "buy", quantity, leverage: 2 })).status).toBe(201)
          const refused = yield* placeOrder(token, id, { symbol: "BTC", side: "buy", quantity: 0.001 })
          expectError(refused, 422, "risk_blocked")
          // This order's check, or the exit watcher's pass before it, found the loss.
          expect(refused.body.error).toContain("max_daily_loss")
          const state = (yield* risk(token, id)).body
          expect(state.mode).toBe("paused")
          expect(state.daily_pnl).toBeLessThan(-1)
          const now = yield* TestClock.currentTimeMillis
          expect(Date.parse(state.resume_at)).toBe(Math.floor(now / 86_400_000) * 86_400_000 + 86_400_000)
        }))

      it.effect("PUT mode flatten closes every position with flatten exits, then pauses the account", () =>
        Effect.gen(function*() {
          const { id, token } = yield* trader
          for (const symbol of ["BTC", "ETH"]) {
            const { quantity } = yield* quantityFor(token, symbol, 1_000)
            expect((yield* placeOrder(token, id, { symbol, side: symbol === "BTC" ? "buy" : "sell", quantity })).status)
              .toBe(201)
          }
          expect(yield* positions(token, id)).toHaveLength(2)
          const flattened = yield* setRisk(token, id, { mode: "flatten" })
          expect(flattened.status).toBe(200)
          expect(flattened.body).toMatchObject({ mode: "paused", resume_at: null })
          expect(yield* positions(token, id)).toEqual([])
          const exits = (yield* orders(token, id)).filter((o) => o.trigger === "flatten")
          expect(exits.map((o) => [o.symbol, o.side, o.status]).sort()).toEqual([
            ["BTC", "sell", "filled"],
            ["ETH", "buy", "filled"]
          ])
          const account = (yield* call("GET", `/api/account/${id}`, { token })).body
          expect(account.frozen_cash).toBeCloseTo(0, 6)
          expect((yield* events(token, id)).body.events.map((e: any) => [e.from_mode, e.to_mode, e.source])).toEqual([
            ["flatten", "paused", "rule"],
            ["active", "flatten", "manual"]
          ])
          expectError(
            yield* placeOrder(token, id, { symbol: "BTC", side: "buy", quantity: 0.001 }),
            422,
            "risk_blocked"
          )
        }))

      it.effect("a mode change reaches the owner's market-intelligence stream as a risk update", () =>
        Effect.gen(function*() {
          const { id, token } = yield* trader
          const sse = yield* openSse("?symbols=BTC", { token })
          yield* Effect.promise(() => sse.next("snapshot"))
          yield* setRisk(token, id, { mode: "reduce_only" })
          const update = yield* Effect.promise(() => sse.next("update"))
          expect(update.data).toMatchObject({
            kind: "risk",
            event: { account_id: id, from_mode: "active", to_mode: "reduce_only", source: "manual" }
          })
          sse.close()
        }))

      it.effect("a mode change reaches the owner's WebSocket on the risk channel; another user's does not", () =>
        Effect.gen(function*() {
          const { id, token } = yield* trader
          const other = yield* trader
          const ws = yield* openWs(`?session_token=${token}`)
          ws.send({ type: "subscribe", channel: "risk" })
          expect(yield* Effect.promise(() => ws.next())).toEqual({ type: "subscribed", channel: "risk" })
          yield* setRisk(other.token, other.id, { mode: "paused" })
          yield* setRisk(token, id, { mode: "paused" })
          const event = yield* Effect.promise(() => ws.next((m) => m.type === "event"))
          expect(event).toMatchObject({
            channel: "risk",
            data: { account_id: id, from_mode: "active", to_mode: "paused", source: "manual" }
          })
          ws.socket.close()
        }))
    })

    // The exit watcher passes once a simulated minute here, so the clock can walk the market for hours.
    layer(AutomationServer(storage, { pollInterval: Duration.minutes(1) }), { timeout: "120 seconds" })((it) => {
      it.effect("the drawdown kill switch is measured from the equity peak, not from the start: it flattens, then pauses", () =>
        Effect.gen(function*() {
          const { id, token } = yield* trader
          const { quantity } = yield* quantityFor(token, "BTC", 8_000)
          const opened = yield* placeOrder(token, id, { symbol: "BTC", side: "buy", quantity, leverage: 10 })
          expect(opened.status).toBe(201)
          // A loose limit at first: the exit watcher values the account on each pass too.
          expect((yield* setRisk(token, id, { limits: { max_drawdown_percent: 50 } })).status).toBe(200)
          const start = 10_000
          // Walk the simulated market a minute at a time (the watcher and each read raise the peak) until the equity has risen above the
          // start and then fallen from its peak by clearly more than it is below the start.
          const t0 = yield* TestClock.currentTimeMillis
          let found: { peak: number; equity: number } | undefined
          for (let step = 1; step <= 120 && found === undefined; step++) {
            yield* TestClock.setTime(t0 + step * 60_000)
            const { equity, peak_equity: peak } = (yield* risk(token, id)).body
            expect(peak).toBeGreaterThanOrEqual(equity)
            const fromPeak = ((peak - equity) / peak) * 100
            const fromStart = Math.max(0, ((start - equity) / start) * 100)
            if (peak > start && fromPeak - fromStart > 0.02) found = { peak, equity }
          }
          expect(found).toBeDefined()
          const { equity, peak } = found!
          const fromPeak = ((peak - equity) / peak) * 100
          const fromStart = Math.max(0, ((start - equity) / start) * 100)
          const limit = Number(((fromPeak + fromStart) / 2).toFixed(4))
          // Measured from the start, the account would be within its limit.
          expect(fromStart).toBeLessThan(limit)
          // The limit, once set, is breached at once: the account is flattened, then paused.
          const set = yield* setRisk(token, id, { limits: { max_drawdown_percent: limit } })
          expect(set.body).toMatchObject({ mode: "paused", resume_at: null })
          expect(set.body.reason).toBe("flattened: every position is closed")
          expect(yield* positions(token, id)).toEqual([])
          const [exit] = (yield* orders(token, id)).filter((o) => o.trigger === "flatten")
          expect(exit).toMatchObject({ symbol: "BTC", side: "sell", status: "filled" })
          const log = (yield* events(token, id)).body.events
          expect(log.map((e: any) => [e.from_mode, e.to_mode, e.source])).toEqual([
            ["flatten", "paused", "rule"],
            ["active", "flatten", "rule"]
          ])
          expect(log[1].reason).toContain(`below its peak ${peak.toFixed(2)}`)
          const refused = yield* placeOrder(token, id, { symbol: "BTC", side: "buy", quantity: 0.001 })
          expectError(refused, 422, "risk_blocked")
          expect(refused.body.rule).toBe("mode")
        }))
    })
  })
}
