import { describe, expect, layer } from "@effect/vitest"
import { defaultSandboxLimits, SignalEngine } from "@trading-platform/core"
import { testStorages } from "@trading-platform/core/testing"
import { Effect, TestClock } from "effect"
import { createAccount } from "../support/Accounts.js"
import { allFinished, AutomationServer, createProgram, exitProgram, waitForRuns } from "../support/Automation.js"
import { marketNow, stuckProgram, throwingProgram } from "../support/Backtests.js"
import { call, expectError, signUp } from "../support/TestServer.js"

// The scheduler polls every second of the test clock; a second at a time lets it see the clock's moves.
const tick = TestClock.adjust("1 second")

// A day: long enough that no test's clock moves reach it, so only manual runs fire these bindings.
const daily = 1440

const bind = (token: string, programId: number, body: Record<string, unknown>) =>
  call("POST", `/api/programs/${programId}/bindings`, {
    token,
    body: { symbols: ["BTC"], interval_minutes: daily, ...body }
  })

/** Binds, runs it by hand once and answers the binding with its finished runs. */
const bindAndRun = (token: string, programId: number, body: Record<string, unknown>) =>
  Effect.gen(function*() {
    const binding = yield* bind(token, programId, body)
    expect(binding.status).toBe(201)
    const queued = yield* call("POST", `/api/programs/${programId}/bindings/${binding.body.id}/run`, { token })
    expect(queued.status).toBe(202)
    const runs = yield* waitForRuns(token, programId, binding.body.id, allFinished(queued.body.runs.length))
    return { binding: binding.body, runs }
  })

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`automation over ${storage.name}`, () => {
    layer(AutomationServer(storage), { timeout: "120 seconds" })((it) => {
      it.effect("bindings: create (201), list, get, update, disable and delete", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const program = yield* createProgram(token)
          const account = yield* createAccount(token)
          const created = yield* bind(token, program, {
            account_id: account.id,
            symbols: ["btc", "ETH", "BTC"],
            interval_minutes: 15,
            params: { risk: 2 },
            leverage: 3
          })
          expect(created.status).toBe(201)
          const now = yield* TestClock.currentTimeMillis
          expect(created.body).toMatchObject({
            program_id: program,
            account_id: account.id,
            symbols: ["BTC", "ETH"],
            timeframe: "1h",
            interval_minutes: 15,
            signal_pool_ids: [],
            params: { risk: 2 },
            leverage: 3,
            enabled: true,
            portfolio: false,
            timeframes: [],
            next_run_at: new Date(now + 15 * 60_000).toISOString()
          })
          const id = created.body.id
          const listed = yield* call("GET", `/api/programs/${program}/bindings`, { token })
          expect(listed.body.bindings.map((b: any) => b.id)).toEqual([id])
          expect((yield* call("GET", `/api/programs/${program}/bindings/${id}`, { token })).body).toEqual(created.body)

          const disabled = yield* call("PUT", `/api/programs/${program}/bindings/${id}`, {
            token,
            body: { enabled: false, leverage: null }
          })
          expect(disabled.status).toBe(200)
          expect(disabled.body).toMatchObject({
            enabled: false,
            next_run_at: null,
            leverage: null,
            interval_minutes: 15
          })
          const enabled = yield* call("PUT", `/api/programs/${program}/bindings/${id}`, {
            token,
            body: { enabled: true }
          })
          expect(enabled.body.next_run_at).toBe(new Date(now + 15 * 60_000).toISOString())
          const portfolio = yield* call("PUT", `/api/programs/${program}/bindings/${id}`, {
            token,
            body: { portfolio: true, timeframes: ["4h", "1d"] }
          })
          expect(portfolio.body).toMatchObject({ portfolio: true, timeframes: ["4h", "1d"], symbols: ["BTC", "ETH"] })

          expect((yield* call("DELETE", `/api/programs/${program}/bindings/${id}`, { token })).status).toBe(204)
          expectError(yield* call("GET", `/api/programs/${program}/bindings/${id}`, { token }), 404, "not_found")
        }))

      it.effect("bindings: bad input 400, leverage above the account's 422, unknown symbols 422, no token 401", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const program = yield* createProgram(token)
          const account = yield* createAccount(token, { max_leverage: 5 })
          const path = `/api/programs/${program}/bindings`
          expectError(
            yield* call("POST", path, { token, body: { account_id: account.id, symbols: ["BTC"] } }),
            400,
            "invalid_input"
          )
          expectError(yield* bind(token, program, { account_id: account.id, symbols: [] }), 400, "invalid_input")
          expectError(
            yield* bind(token, program, { account_id: account.id, interval_minutes: 0 }),
            400,
            "invalid_input"
          )
          expectError(yield* bind(token, program, { account_id: account.id, timeframe: "2h" }), 400, "invalid_input")
          // Longer timeframes: known, none twice, each a whole number of the binding's bars.
          for (
            const [timeframes, at] of [[["2h"], "timeframes.0"], [["4h", "4h"], "timeframes"], [
              ["4h", "30m"],
              "timeframes.1"
            ]]
          ) {
            const refused = yield* bind(token, program, { account_id: account.id, timeframes })
            expectError(refused, 400, "invalid_input")
            expect(refused.body.issues[0].path, String(timeframes)).toBe(at)
          }
          expectError(yield* bind(token, program, { account_id: account.id, portfolio: "yes" }), 400, "invalid_input")
          expectError(
            yield* call("POST", path, { token, raw: "{", headers: { "content-type": "application/json" } }),
            400,
            "invalid_input"
          )
          expectError(yield* bind(token, program, { account_id: account.id, leverage: 6 }), 422, "leverage_too_high")
          expectError(yield* bind(token, program, { account_id: account.id, leverage: 0 }), 422, "leverage_too_high")
          const unlisted = yield* bind(token, program, { account_id: account.id, symbols: ["BTC", "NOPE", "ZZZ"] })
          expectError(unlisted, 422, "symbol_not_listed")
          expect(unlisted.body.symbols).toEqual(["NOPE", "ZZZ"])
          expectError(yield* bind(token, program, { account_id: 999999 }), 404, "not_found")
          expectError(yield* bind(token, 999999, { account_id: account.id }), 404, "not_found")
          expectError(
            yield* call("POST", path, { body: { account_id: account.id, symbols: ["BTC"], interval_minutes: 5 } }),
            401,
            "unauthorized"
          )

          const ok = yield* bind(token, program, { account_id: account.id })
          const cleared = yield* call("PUT", `${path}/${ok.body.id}`, { token, body: { interval_minutes: null } })
          expectError(cleared, 400, "invalid_input")
          expectError(
            yield* call("PUT", `${path}/${ok.body.id}`, { token, body: { leverage: 9 } }),
            422,
            "leverage_too_high"
          )
          const shorter = yield* call("PUT", `${path}/${ok.body.id}`, {
            token,
            body: { timeframe: "1d", timeframes: ["4h"] }
          })
          expectError(shorter, 400, "invalid_input")
          expect(shorter.body.issues).toEqual([{
            path: "timeframes.0",
            message: "must be longer than 1d and a whole number of 1d bars; got 4h"
          }])
          // A binding is reached only through its own program.
          const other = yield* createProgram(token)
          expectError(yield* call("GET", `/api/programs/${other}/bindings/${ok.body.id}`, { token }), 404, "not_found")
        }))

      it.effect("bindings: another user's account, program or binding answers 403", () =>
        Effect.gen(function*() {
          const me = yield* signUp()
          const them = yield* signUp()
          const mine = yield* createProgram(me.token)
          const myAccount = yield* createAccount(me.token)
          const theirProgram = yield* createProgram(them.token)
          const theirAccount = yield* createAccount(them.token)
          expectError(yield* bind(me.token, mine, { account_id: theirAccount.id }), 403, "forbidden")
          expectError(yield* bind(me.token, theirProgram, { account_id: myAccount.id }), 403, "forbidden")
          const theirs = yield* bind(them.token, theirProgram, { account_id: theirAccount.id })
          const path = `/api/programs/${theirProgram}/bindings/${theirs.body.id}`
          for (
            const [method, suffix] of [["GET", ""], ["PUT", ""], ["DELETE", ""], ["POST", "/run"], [
              "GET",
              "/runs"
            ]] as const
          ) {
            expectError(
              yield* call(method, path + suffix, { token: me.token, ...(method === "PUT" ? { body: {} } : {}) }),
              403,
              "forbidden"
            )
          }
          const mineBound = yield* bind(me.token, mine, { account_id: myAccount.id })
          const moved = yield* call("PUT", `/api/programs/${mine}/bindings/${mineBound.body.id}`, {
            token: me.token,
            body: { account_id: theirAccount.id }
          })
          expectError(moved, 403, "forbidden")
          expectError(
            yield* call("GET", `/api/account/${theirAccount.id}/orders`, { token: me.token }),
            403,
            "forbidden"
          )
          expectError(
            yield* call("GET", `/api/account/${theirAccount.id}/positions`, { token: me.token }),
            403,
            "forbidden"
          )
          expectError(yield* call("GET", "/api/account/999999/positions", { token: me.token }), 404, "not_found")
          // The funding list of paper positions: the same owner rule, a bad id or page 400, no token 401.
          expectError(
            yield* call("GET", `/api/account/${theirAccount.id}/funding`, { token: me.token }),
            403,
            "forbidden"
          )
          expectError(yield* call("GET", "/api/account/999999/funding", { token: me.token }), 404, "not_found")
          expectError(yield* call("GET", "/api/account/abc/funding", { token: me.token }), 400, "invalid_input")
          expectError(
            yield* call("GET", `/api/account/${myAccount.id}/funding?limit=0`, { token: me.token }),
            400,
            "invalid_input"
          )
          expectError(yield* call("GET", `/api/account/${myAccount.id}/funding`), 401, "unauthorized")
          expect((yield* call("GET", `/api/account/${myAccount.id}/funding`, { token: me.token })).body).toEqual({
            funding: []
          })
        }))

      it.effect("a run on the simulated venue opens a paper position: order, fill, cash and export move together", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const program = yield* createProgram(token)
          const account = yield* createAccount(token)
          const { binding, runs } = yield* bindAndRun(token, program, { account_id: account.id })
          expect(runs).toHaveLength(1)
          const [run] = runs
          expect(run).toMatchObject({
            binding_id: binding.id,
            symbol: "BTC",
            trigger: "manual",
            status: "completed",
            attempts: 1,
            error: null
          })
          // The program saw the backtest contract: 500 closed candles up to now, and the account's balance.
          expect(run.decision).toEqual({
            operation: "buy",
            target_portion_of_balance: 0.5,
            reason: `candles=500 balance=10000 last=${marketNow - 3_600_000}`
          })

          const orders = (yield* call("GET", `/api/account/${account.id}/orders`, { token })).body.orders
          expect(orders).toHaveLength(1)
          const [order] = orders
          expect(order).toMatchObject({
            run_id: run.id,
            route: "paper",
            exchange: "venue2",
            side: "buy",
            status: "filled",
            leverage: 1,
            realized_pnl: 0
          })
          expect(order.fee).toBeCloseTo(order.quantity * order.price * 0.00035, 8)

          const positions = (yield* call("GET", `/api/account/${account.id}/positions`, { token })).body.positions
          expect(positions).toHaveLength(1)
          expect(positions[0]).toMatchObject({ symbol: "BTC", side: "long", leverage: 1 })
          expect(positions[0].size).toBeCloseTo(order.quantity, 10)
          expect(positions[0].entry_price).toBeCloseTo(order.price, 8)

          const after = (yield* call("GET", `/api/account/${account.id}`, { token })).body
          const margin = order.quantity * order.price
          expect(after.frozen_cash).toBeCloseTo(margin, 6)
          expect(after.current_cash).toBeCloseTo(10_000 - margin - order.fee, 6)
          expect(positions[0].margin).toBeCloseTo(after.frozen_cash, 6)

          const exported = (yield* call("GET", `/api/trader/${account.id}/export`, { token })).body
          expect(exported.decision_logs).toEqual([
            expect.objectContaining({
              symbol: "BTC",
              operation: "buy",
              target_portion_of_balance: 0.5,
              reason: run.decision.reason
            })
          ])
          expect(exported.trades).toEqual([expect.objectContaining({ symbol: "BTC", side: "buy" })])
          expect(exported.trades[0].quantity).toBeCloseTo(order.quantity, 10)

          // Closing returns the margin and the profit to cash, and leaves the account flat.
          yield* call("PUT", `/api/programs/${program}/bindings/${binding.id}`, {
            token,
            body: { params: { close: true } }
          })
          yield* call("POST", `/api/programs/${program}/bindings/${binding.id}/run`, { token })
          const closed = yield* waitForRuns(token, program, binding.id, allFinished(2))
          expect(closed[0].decision.operation).toBe("close")
          expect((yield* call("GET", `/api/account/${account.id}/positions`, { token })).body.positions).toEqual([])
          const [exit] = (yield* call("GET", `/api/account/${account.id}/orders?limit=1`, { token })).body.orders
          expect(exit).toMatchObject({ side: "sell", status: "filled" })
          const flat = (yield* call("GET", `/api/account/${account.id}`, { token })).body
          expect(flat.frozen_cash).toBeCloseTo(0, 6)
          expect(flat.current_cash).toBeCloseTo(10_000 - order.fee - exit.fee + exit.realized_pnl, 6)

          // The round trip is one live trade in the analytics, by program, symbol and account.
          const pnl = exit.realized_pnl - order.fee - exit.fee
          const summary = (yield* call("GET", "/api/analytics/program-summary", { token })).body
          expect(summary.filters.source).toBe("live")
          expect(summary.items).toEqual([{
            program_id: program,
            program_name: "Live",
            total_trades: 1,
            symbols_traded: 1,
            total_pnl: expect.any(Number),
            win_rate: exit.realized_pnl - exit.fee > 0 ? 1 : 0
          }])
          expect(summary.items[0].total_pnl).toBeCloseTo(pnl, 6)
          const bySymbol = (yield* call("GET", "/api/analytics/program-summary?dimension=symbol", { token })).body.items
          expect(bySymbol.map((i: any) => [i.symbol, i.total_trades])).toEqual([["BTC", 1]])
          const byAccount =
            (yield* call("GET", `/api/analytics/program-summary?dimension=account&account_id=${account.id}`, { token }))
              .body.items
          expect(byAccount).toEqual([
            expect.objectContaining({ account_id: account.id, account_name: account.name, total_trades: 1 })
          ])
          const later = new Date(Date.parse(exit.filled_at) + 1).toISOString()
          expect((yield* call("GET", `/api/analytics/program-summary?from=${later}`, { token })).body.items).toEqual([])
        }))

      it.effect(
        "a take profit or stop loss closes the paper position once when the mark reaches it",
        () =>
          Effect.gen(function*() {
            const { token } = yield* signUp()
            const program = yield* createProgram(token, exitProgram)
            const account = yield* createAccount(token)
            // Exits 0.05 % either side of the last close; the simulated price moves every minute.
            const { binding, runs } = yield* bindAndRun(token, program, {
              account_id: account.id,
              params: { exit_width: 0.0005 }
            })
            const { stop_loss_price, take_profit_price } = runs[0].decision
            const [opened] = (yield* call("GET", `/api/account/${account.id}/positions`, { token })).body.positions
            expect(opened).toMatchObject({ side: "long", take_profit_price, stop_loss_price })
            const deadline = Date.now() + 60_000
            let positions = [opened]
            while (positions.length > 0 && Date.now() < deadline) {
              yield* TestClock.adjust("5 minutes")
              yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 25)))
              positions = (yield* call("GET", `/api/account/${account.id}/positions`, { token })).body.positions
            }
            expect(positions).toEqual([])
            const [exit, entry] = (yield* call("GET", `/api/account/${account.id}/orders`, { token })).body.orders
            expect(exit).toMatchObject({
              run_id: null,
              binding_id: binding.id,
              program_id: program,
              route: "paper",
              side: "sell",
              status: "filled",
              trigger: expect.stringMatching(/^(take_profit|stop_loss)$/)
            })
            expect(exit.quantity).toBeCloseTo(entry.quantity, 10)
            // It fired on the mark's side of the level it names (the sell then fills at the price of its
            // moment, which in a fast market has moved on).
            if (exit.trigger === "take_profit") expect(exit.trigger_price).toBeGreaterThanOrEqual(take_profit_price)
            else expect(exit.trigger_price).toBeLessThanOrEqual(stop_loss_price)
            expect(entry.trigger_price).toBeNull()
            const flat = (yield* call("GET", `/api/account/${account.id}`, { token })).body
            expect(flat.frozen_cash).toBeCloseTo(0, 6)
            expect(flat.current_cash).toBeCloseTo(10_000 - entry.fee - exit.fee + exit.realized_pnl, 6)
            const exported = (yield* call("GET", `/api/trader/${account.id}/export`, { token })).body
            expect(exported.trades.map((t: any) => t.side)).toEqual(["buy", "sell"])
            // The watcher keeps passing: the position is closed once.
            yield* TestClock.adjust("1 minute")
            yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
            expect((yield* call("GET", `/api/account/${account.id}/orders`, { token })).body.orders).toHaveLength(2)
          }),
        90_000
      )

      it.effect("two fills of one account, symbol and side in the same millisecond are two trades in the export", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const program = yield* createProgram(
            token,
            `export function decide() { return { operation: "buy", target_portion_of_balance: 0.1 } }`
          )
          const account = yield* createAccount(token)
          const { binding } = yield* bindAndRun(token, program, { account_id: account.id })
          yield* call("POST", `/api/programs/${program}/bindings/${binding.id}/run`, { token })
          yield* waitForRuns(token, program, binding.id, allFinished(2))
          const orders = (yield* call("GET", `/api/account/${account.id}/orders`, { token })).body.orders
          expect(orders.map((o: any) => [o.side, o.status])).toEqual([["buy", "filled"], ["buy", "filled"]])
          // The test clock stood still: both filled in the same millisecond.
          expect(orders[0].filled_at).toBe(orders[1].filled_at)
          const trades = (yield* call("GET", `/api/trader/${account.id}/export`, { token })).body.trades
          expect(trades).toHaveLength(2)
          expect(trades.map((t: any) => t.quantity).sort()).toEqual(orders.map((o: any) => o.quantity).sort())
        }))

      it.effect("a binding with a signal pool runs when the pool fires for its symbol, and opens a position", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const program = yield* createProgram(token)
          const account = yield* createAccount(token)
          const signal = yield* call("POST", "/api/signals", {
            token,
            body: {
              signal_name: "any volume",
              trigger_condition: { metric: "volume", operator: "gt", threshold: 0, time_window: "1m" }
            }
          })
          expect(signal.status).toBe(201)
          const pool = yield* call("POST", "/api/signals/pools", {
            token,
            body: { pool_name: "btc", symbols: ["BTC", "ETH"], logic: "OR", signal_ids: [signal.body.id] }
          })
          expect(pool.status).toBe(201)
          // Listens to the pool for BTC only, with no schedule.
          const created = yield* call("POST", `/api/programs/${program}/bindings`, {
            token,
            body: { account_id: account.id, symbols: ["BTC"], signal_pool_ids: [pool.body.id] }
          })
          expect(created.status).toBe(201)
          expect(created.body).toMatchObject({
            interval_minutes: null,
            next_run_at: null,
            signal_pool_ids: [pool.body.id]
          })

          const fired = yield* Effect.flatMap(SignalEngine, (engine) => engine.evaluateNow)
          expect(fired.filter((t) => t.pool_id === pool.body.id).map((t) => t.symbol).sort()).toEqual(["BTC", "ETH"])
          const runs = yield* waitForRuns(token, program, created.body.id, allFinished(1))
          expect(runs).toHaveLength(1)
          expect(runs[0]).toMatchObject({
            symbol: "BTC",
            trigger: "signal",
            status: "completed",
            decision: { operation: "buy" }
          })
          const positions = (yield* call("GET", `/api/account/${account.id}/positions`, { token })).body.positions
          expect(positions).toEqual([expect.objectContaining({ symbol: "BTC", side: "long" })])

          // Another user's pool cannot drive a binding.
          const other = yield* signUp()
          const theirs = yield* call("POST", `/api/programs/${yield* createProgram(other.token)}/bindings`, {
            token: other.token,
            body: {
              account_id: (yield* createAccount(other.token)).id,
              symbols: ["BTC"],
              signal_pool_ids: [pool.body.id]
            }
          })
          expectError(theirs, 403, "forbidden")
          expectError(
            yield* bind(token, program, { account_id: account.id, signal_pool_ids: [999999] }),
            404,
            "not_found"
          )
        }))

      it.effect("a decision above the account's max_leverage is refused: the order is rejected and nothing fills", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const program = yield* createProgram(token)
          const account = yield* createAccount(token, { max_leverage: 2, default_leverage: 1 })
          const { runs } = yield* bindAndRun(token, program, { account_id: account.id, params: { leverage: 5 } })
          expect(runs[0]).toMatchObject({ status: "completed" })
          expect(runs[0].error).toMatch(/leverage_too_high/)
          const [order] = (yield* call("GET", `/api/account/${account.id}/orders`, { token })).body.orders
          expect(order).toMatchObject({ status: "rejected", leverage: 5, price: null, filled_at: null })
          expect(order.error).toMatch(/leverage 5 is above the account's limit 2/)
          expect((yield* call("GET", `/api/account/${account.id}/positions`, { token })).body.positions).toEqual([])
          const unchanged = (yield* call("GET", `/api/account/${account.id}`, { token })).body
          expect({ cash: unchanged.current_cash, frozen: unchanged.frozen_cash }).toEqual({ cash: 10_000, frozen: 0 })
        }))

      it.effect("a hold with a reason keeps its reason on the run and in the decision log; nothing is ordered", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const program = yield* createProgram(
            token,
            `export function decide(data) { return { operation: "hold", reason: "waiting at " + data.bar.time } }`
          )
          const account = yield* createAccount(token)
          const { runs } = yield* bindAndRun(token, program, { account_id: account.id })
          const reason = `waiting at ${marketNow - 3_600_000}`
          expect(runs[0]).toMatchObject({ status: "completed", error: null, decision: { operation: "hold", reason } })
          const exported = (yield* call("GET", `/api/trader/${account.id}/export`, { token })).body
          expect(exported.decision_logs).toEqual([
            expect.objectContaining({ symbol: "BTC", operation: "hold", reason })
          ])
          expect((yield* call("GET", `/api/account/${account.id}/orders`, { token })).body.orders).toEqual([])
        }))

      it.effect("a portfolio run shows its program every symbol and the binding's longer timeframes, and logs a decision per symbol", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const program = yield* createProgram(
            token,
            `export function decide(data) {
              const seen = (m) => [m.symbol, m.candles.length, m.timeframes["4h"].length, m.timeframes["4h"].at(-1)?.time ?? null]
              return Object.keys(data.symbols).map((symbol) =>
                ({ symbol, operation: "hold", reason: JSON.stringify(seen(data.symbols[symbol])) }))
            }`
          )
          const account = yield* createAccount(token)
          const { runs } = yield* bindAndRun(token, program, {
            account_id: account.id,
            symbols: ["BTC", "ETH"],
            portfolio: true,
            timeframes: ["4h"]
          })
          expect(runs).toHaveLength(1)
          expect(runs[0]).toMatchObject({ status: "completed", symbol: "BTC", symbols: ["BTC", "ETH"] })
          // 500 hourly bars to the last closed one (opened an hour before now), from a 4h boundary: 125 whole 4h candles.
          const fourHours = 4 * 3_600_000
          expect(runs[0].decisions.map((d: any) => JSON.parse(d.reason))).toEqual([
            ["BTC", 500, 125, marketNow - fourHours],
            ["ETH", 500, 125, marketNow - fourHours]
          ])
          const exported = (yield* call("GET", `/api/trader/${account.id}/export`, { token })).body
          expect(exported.decision_logs.map((d: any) => d.symbol).sort()).toEqual(["BTC", "ETH"])
        }))

      it.effect("a program that throws fails its run once, recorded and not retried", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const program = yield* createProgram(token, throwingProgram)
          const account = yield* createAccount(token)
          const { runs } = yield* bindAndRun(token, program, { account_id: account.id })
          expect(runs[0]).toMatchObject({ status: "failed", attempts: 1, decision: null })
          expect(runs[0].error).toMatch(/^Program error \(threw\): decide threw Error: boom at bar 6/)
          expect((yield* call("GET", `/api/account/${account.id}/orders`, { token })).body.orders).toEqual([])
        }))

      // Three five-minute slots with the exit watcher passing each second of them over two open
      // positions: about 900 passes, which a busy machine (the full suite) takes over 90 s for.
      it.effect("a schedule queues one run per symbol each interval of the test clock", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const program = yield* createProgram(token)
          const account = yield* createAccount(token)
          const binding =
            (yield* bind(token, program, { account_id: account.id, symbols: ["BTC", "ETH"], interval_minutes: 5 })).body
          expect((yield* call("GET", `/api/programs/${program}/bindings/${binding.id}/runs`, { token })).body.runs)
            .toEqual([])
          const created = Date.parse(binding.created_at)
          yield* TestClock.adjust("5 minutes")
          const first = yield* waitForRuns(token, program, binding.id, allFinished(2), tick)
          expect(first.map((r) => [r.symbols, r.trigger, r.status]).sort()).toEqual([
            [["BTC"], "schedule", "completed"],
            [
              ["ETH"],
              "schedule",
              "completed"
            ]
          ])
          for (const run of first) expect(run.decisions).toEqual([run.decision])
          yield* TestClock.adjust("5 minutes")
          const second = yield* waitForRuns(token, program, binding.id, allFinished(4), tick)
          expect(second).toHaveLength(4)
          // Both symbols were bought once; the second slot held.
          const positions = (yield* call("GET", `/api/account/${account.id}/positions`, { token })).body.positions
          expect(positions.map((p: any) => p.symbol)).toEqual(["BTC", "ETH"])
          expect(second.slice(0, 2).map((r) => r.decision.operation)).toEqual(["hold", "hold"])
          const next =
            (yield* call("GET", `/api/programs/${program}/bindings/${binding.id}`, { token })).body.next_run_at
          expect(next).toBe(new Date(created + 15 * 60_000).toISOString())
          // A portfolio binding queues one run a slot for both symbols, whose program reads its 4h candles.
          yield* call("PUT", `/api/programs/${program}/bindings/${binding.id}`, {
            token,
            body: { portfolio: true, timeframes: ["4h"] }
          })
          yield* TestClock.adjust("5 minutes")
          const third = yield* waitForRuns(token, program, binding.id, allFinished(5), tick)
          expect(third[0]).toMatchObject({ symbol: "BTC", symbols: ["BTC", "ETH"], status: "completed" })
          expect(third[0].decisions).toHaveLength(2)
        }), 180_000)

      it.effect("GET /api/arena/check-pnl-status is ok after a refresh that marked every account with fills", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const program = yield* createProgram(token)
          const account = yield* createAccount(token)
          yield* bindAndRun(token, program, { account_id: account.id })
          yield* TestClock.adjust("1 minute")
          const deadline = Date.now() + 30_000
          let status = (yield* call("GET", "/api/arena/check-pnl-status", { token })).body
          while (status.unsynced > 0 && Date.now() < deadline) {
            yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 25)))
            status = (yield* call("GET", "/api/arena/check-pnl-status", { token })).body
          }
          expect(status).toEqual({ status: "ok", last_refresh_at: expect.any(String), unsynced: 0 })
          const pnl = (yield* call("GET", "/api/arena/pnl", { token })).body.accounts
          expect(pnl).toHaveLength(1)
          expect(pnl[0]).toMatchObject({ account_id: account.id, realized_pnl: 0, error: null })
          expect(pnl[0].total_pnl).toBeCloseTo(pnl[0].unrealized_pnl - pnl[0].fees, 8)
          expectError(yield* call("GET", "/api/arena/check-pnl-status"), 401, "unauthorized")
        }))
    })
  })
}

// A 1 s safety net, so the watchdog (twice the net) stops the stuck call soon; one attempt only.
// In QuickJS: V8 interrupts the same call itself, at the net, inside the thread.
describe("a live run whose program is stuck in one call QuickJS cannot interrupt", () => {
  layer(
    AutomationServer(testStorages[0]!, { maxAttempts: 1 }, {
      sandbox: { ...defaultSandboxLimits, wallMillisPerCall: 1_000, runtime: "quickjs" }
    }),
    { timeout: "120 seconds" }
  )((it) => {
    it.effect("is stopped by its thread's watchdog, which is not the program's verdict: handed back, then given up saying why", () =>
      Effect.gen(function*() {
        const { token } = yield* signUp()
        const program = yield* createProgram(token, stuckProgram)
        const account = yield* createAccount(token)
        const { runs } = yield* bindAndRun(token, program, { account_id: account.id })
        expect(runs[0]).toMatchObject({ status: "failed", attempts: 2 })
        expect(runs[0].error).toMatch(
          /^Gave up after 1 attempts: The program was stuck in one call for over 2000 ms \(the sandbox's wall-clock safety net\)/
        )
        // The server kept answering, and nothing was ordered.
        expect((yield* call("GET", `/api/account/${account.id}/orders`, { token })).body.orders).toEqual([])
      }))
  })
})
