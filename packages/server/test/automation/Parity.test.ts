import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, layer } from "@effect/vitest"
import { testStorages } from "@trading-platform/core/testing"
import { Duration, Effect, TestClock } from "effect"
import { createAccount } from "../support/Accounts.js"
import { allFinished, AutomationServer, createProgram, waitForRuns } from "../support/Automation.js"
import { isFinished, marketNow, waitForBacktest } from "../support/Backtests.js"
import { call, expectError, signUp } from "../support/TestServer.js"

const hour = 3_600_000

/**
 * Trades on the hour of the bar alone, so a backtest and a paper run (which sees only the latest
 * 500 bars) decide alike: buys, adds, holds, reverses to a short at a different leverage, buys
 * back 40 % of it (reduce only), closes; every six hours.
 */
const hourlyProgram = `export function decide(data) {
  switch (Math.floor(data.bar.time / 3600000) % 6) {
    case 0: return { operation: "buy", target_portion_of_balance: 0.5, leverage: 3 }
    case 1: return { operation: "buy", target_portion_of_balance: 0.5, leverage: 3 }
    case 3: return { operation: "sell", target_portion_of_balance: 0.8, leverage: 2 }
    case 4: return { operation: "buy", reduce_only: true, target_portion_of_position: 0.4 }
    case 5: return { operation: "close" }
    default: return { operation: "hold" }
  }
}`

// The slots 1..18 fill the decisions of bars 0..17; bar 17 closes, so the account is flat after slot 18.
const slots = 18

/** A user with `code` as a program and a paper account (`account` over 10 000 of capital) trading BTC hourly. */
const paperTrader = (code: string, account: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const { token } = yield* signUp()
    const program = yield* createProgram(token, code)
    const created = yield* createAccount(token, { initial_capital: 10_000, ...account })
    const bind = (params: Record<string, unknown> = {}) =>
      Effect.map(
        call("POST", `/api/programs/${program}/bindings`, {
          token,
          body: { account_id: created.id, symbols: ["BTC"], timeframe: "1h", interval_minutes: 1440, params }
        }),
        (reply) => reply.body.id as number
      )
    /** Runs the binding by hand, its `count`th run. */
    const runOnce = (binding: number, count = 1) =>
      Effect.zipRight(
        call("POST", `/api/programs/${program}/bindings/${binding}/run`, { token }),
        waitForRuns(token, program, binding, allFinished(count))
      )
    /** Leaves what the binding placed to the exit watcher. */
    const disable = (binding: number) =>
      call("PUT", `/api/programs/${program}/bindings/${binding}`, { token, body: { enabled: false } })
    const read = <K extends string>(path: string, key: K) =>
      Effect.map(call("GET", `/api/account/${created.id}${path}`, { token }), (r) => r.body[key] as Array<any>)
    return {
      token,
      account: created,
      bind,
      runOnce,
      disable,
      orders: read("/orders", "orders"),
      positions: read("/positions", "positions"),
      funding: read("/funding", "funding")
    }
  })

/** Whether the exit watcher has closed the position: an exit after the entry, filled (a pass records it, then fills it). */
const exited = (orders: ReadonlyArray<any>) => orders.length >= 2 && orders[0].status === "filled"

/** Waits (on the wall, polling) until the scheduler's pass at `at` on the Clock is over: its lease records each pass. */
const passed = (at: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
      const [lease] = yield* sql<{ last_run_at: Date | null }>`
        SELECT last_run_at FROM leases WHERE name = 'automation_scheduler'`
      if (lease?.last_run_at && lease.last_run_at.getTime() >= at) return
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
    }
    return yield* Effect.die(new Error(`the scheduler's pass at ${new Date(at).toISOString()} did not end in a minute`))
  }).pipe(Effect.orDie)

/**
 * Moves the clock on an hour at a time, until `done` holds (at most 120 hours): after each step, the
 * scheduler's pass at that hour (which runs the exit watcher) has ended before `done` is asked.
 */
const hourByHour = <R>(done: Effect.Effect<boolean, never, R>) =>
  Effect.gen(function*() {
    const start = Math.floor((yield* TestClock.currentTimeMillis) / hour) * hour
    for (let h = 1; h <= 120; h++) {
      yield* TestClock.setTime(start + h * hour)
      yield* passed(start + h * hour)
      if (yield* done) return
    }
  })

/**
 * Backtests `body` (over the bars a paper account traded, on the venue it trades on) and answers
 * the completed result with its fills and the account's fills in one shape, oldest first.
 */
const backtestBeside = (token: string, program: number, account: any, body: Record<string, unknown>) =>
  Effect.gen(function*() {
    const backtest = yield* call("POST", `/api/programs/${program}/backtest`, {
      token,
      // The venue the account trades on (venue2 unless venue1 is enabled for it).
      body: { exchange: account.venue1_enabled ? "venue1" : "venue2", timeframe: "1h", ...body }
    })
    expect(backtest.status).toBe(202)
    const result = yield* waitForBacktest(token, backtest.body.id, isFinished)
    expect(result.status).toBe("completed")
    const orders = (yield* call("GET", `/api/account/${account.id}/orders?limit=100`, { token })).body.orders
    const paperFills = orders.toReversed().map((o: any) => ({
      symbol: o.symbol,
      time: Date.parse(o.filled_at),
      side: o.side,
      quantity: o.quantity,
      price: o.price,
      fee: o.fee
    }))
    const backtestFills = result.fills.map(({ reason: _, ...fill }: any) => fill)
    return { result, paperFills, backtestFills }
  })

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`one rulebook over ${storage.name}`, () => {
    // The scheduler passes once an hour, on the hour, so each slot's run fills at that hour's open,
    // and watches open positions once an hour too (every second, each hour the tests walk would be
    // 3,600 passes). The arena's PnL refresher too: once a minute, it made each hour 60 passes over
    // every account with fills, most of the time the liquidation tests took (about 1 s an hour).
    layer(
      AutomationServer(storage, {
        pollInterval: Duration.hours(1),
        watchInterval: Duration.hours(1),
        pnlRefreshInterval: Duration.hours(1)
      }, {
        backtests: {
          concurrency: 1,
          pollInterval: Duration.hours(1),
          lease: Duration.minutes(5),
          maxAttempts: 1
        }
      }),
      { timeout: "180 seconds" }
    )((it) => {
      it.effect(
        "a paper run and a backtest of the same program over the same bars fill, pay and end alike",
        () =>
          Effect.gen(function*() {
            expect(marketNow % (8 * hour)).toBe(0)
            const { token } = yield* signUp()
            const program = yield* createProgram(token, hourlyProgram)
            const account = yield* createAccount(token, { initial_capital: 10_000, max_leverage: 10 })
            const binding = yield* call("POST", `/api/programs/${program}/bindings`, {
              token,
              body: { account_id: account.id, symbols: ["BTC"], timeframe: "1h", interval_minutes: 60 }
            })
            expect(binding.status).toBe(201)
            expect(binding.body.next_run_at).toBe(new Date(marketNow + hour).toISOString())
            for (let slot = 1; slot <= slots; slot++) {
              yield* TestClock.setTime(marketNow + slot * hour)
              yield* waitForRuns(token, program, binding.body.id, allFinished(slot))
            }
            const runs = yield* waitForRuns(token, program, binding.body.id, allFinished(slots))
            expect(runs.every((r: any) => r.status === "completed")).toBe(true)
            // Bar 18 closes an hour later: the backtest needs it, the paper account must not trade it.
            const paused = yield* call("PUT", `/api/programs/${program}/bindings/${binding.body.id}`, {
              token,
              body: { enabled: false }
            })
            expect(paused.status).toBe(200)
            yield* TestClock.setTime(marketNow + (slots + 1) * hour)

            const { backtestFills, paperFills, result } = yield* backtestBeside(token, program, account, {
              symbol: "BTC",
              start: new Date(marketNow).toISOString(),
              // Bar 18 opens where slot 18 filled; the last decision (bar 18's, a hold) never fills.
              end: new Date(marketNow + (slots + 1) * hour).toISOString()
            })
            // 3 sets of: open, add, reverse, reduce, close.
            expect(backtestFills).toHaveLength(15)
            expect(paperFills).toEqual(backtestFills)

            const funding = (yield* call("GET", `/api/account/${account.id}/funding`, { token })).body.funding
            // Held through 08:00 (a long, before the add) and 16:00 (a long, before the reversal).
            expect(funding.map((f: any) => f.time)).toEqual([
              new Date(marketNow + 16 * hour).toISOString(),
              new Date(marketNow + 8 * hour).toISOString()
            ])
            const paid = funding.reduce((sum: number, f: any) => sum + f.amount, 0)
            expect(paid).not.toBe(0)
            expect(paid).toBeCloseTo(result.metrics.total_funding, 8)
            expect(result.trades.reduce((sum: number, t: any) => sum + t.funding, 0)).toBeCloseTo(paid, 8)

            const after = (yield* call("GET", `/api/account/${account.id}`, { token })).body
            expect(after.frozen_cash).toBe(0)
            expect(after.current_cash).toBe(result.final_balance)
            expect(result.equity_curve.at(-1)).toEqual({ time: marketNow + slots * hour, equity: result.final_balance })
          }),
        180_000
      )

      it.effect(
        "a portfolio binding and a backtest of the same symbols decide once per bar and fill alike, symbol after symbol",
        () =>
          Effect.gen(function*() {
            // Every four hours: long BTC and short ETH, close ETH, long ETH on what is left, close both.
            const rotation = `export function decide(data) {
              switch (Math.floor(data.bar.time / 3600000) % 4) {
                case 0: return [
                  { symbol: "BTC", operation: "buy", target_portion_of_balance: 0.5, leverage: 2 },
                  { symbol: "ETH", operation: "sell", target_portion_of_balance: 0.5, leverage: 3 }
                ]
                case 1: return data.symbols.ETH.position ? [{ symbol: "ETH", operation: "close" }] : []
                case 2: return [{ symbol: "ETH", operation: "buy", target_portion_of_balance: 0.3 }]
                default: return [{ symbol: "BTC", operation: "close" }, { symbol: "ETH", operation: "close" }]
              }
            }`
            const { token } = yield* signUp()
            const program = yield* createProgram(token, rotation)
            const account = yield* createAccount(token, { initial_capital: 10_000, max_leverage: 10 })
            const binding = yield* call("POST", `/api/programs/${program}/bindings`, {
              token,
              body: {
                account_id: account.id,
                symbols: ["BTC", "ETH"],
                portfolio: true,
                timeframe: "1h",
                interval_minutes: 60
              }
            })
            expect(binding.status).toBe(201)
            expect(binding.body).toMatchObject({ portfolio: true, symbols: ["BTC", "ETH"], timeframes: [] })
            // Slot s decides bar s - 1 (from `base`, the hour the binding was made) and fills at bar s's open.
            const base = Date.parse(binding.body.next_run_at) - hour
            // At least 8 slots, the last deciding a "close both" bar, so both sides end flat.
            const first = Math.floor(base / hour) % 4
            const cycles = 8 + ((3 - (first + 7) % 4 + 4) % 4)
            for (let slot = 1; slot <= cycles; slot++) {
              yield* TestClock.setTime(base + slot * hour)
              yield* waitForRuns(token, program, binding.body.id, allFinished(slot))
            }
            const runs = yield* waitForRuns(token, program, binding.body.id, allFinished(cycles))
            // One run a slot, deciding for both symbols.
            expect(runs).toHaveLength(cycles)
            expect(runs.every((r: any) => r.status === "completed" && r.symbols.join() === "BTC,ETH")).toBe(true)
            for (const run of runs) expect(run.decision).toEqual(run.decisions[0])
            expect(runs.find((r: any) => r.decisions[1].operation === "sell")?.decisions[0]).toMatchObject({
              operation: "buy",
              symbol: "BTC"
            })
            yield* call("PUT", `/api/programs/${program}/bindings/${binding.body.id}`, {
              token,
              body: { enabled: false }
            })
            yield* TestClock.setTime(base + (cycles + 1) * hour)

            const { backtestFills, paperFills, result } = yield* backtestBeside(token, program, account, {
              symbols: ["BTC", "ETH"],
              start: new Date(base).toISOString(),
              end: new Date(base + (cycles + 1) * hour).toISOString()
            })
            // Two cycles or more of: BTC long and ETH short, ETH closed, ETH long, both closed.
            expect(backtestFills.length).toBeGreaterThanOrEqual(12)
            expect(new Set(backtestFills.map((f: any) => f.symbol))).toEqual(new Set(["BTC", "ETH"]))
            expect(paperFills).toEqual(backtestFills)
            const after = (yield* call("GET", `/api/account/${account.id}`, { token })).body
            expect(after.frozen_cash).toBe(0)
            expect(after.current_cash).toBe(result.final_balance)
          }),
        180_000
      )

      it.effect(
        "a paper limit entry rests until the mark reaches it, the next decision replaces it, and an ioc one never rests",
        () =>
          Effect.gen(function*() {
            const trader = yield* paperTrader(`export function decide(data) {
              if (data.position) return { operation: "hold" }
              return { operation: "sell", order_type: "limit", entry_price: data.bar.close * (1 + data.params.above),
                time_in_force: data.params.tif, target_portion_of_balance: 0.5 }
            }`)
            // Far above the price and ioc: nothing rests, nothing fills.
            yield* trader.runOnce(yield* trader.bind({ above: 0.5, tif: "ioc" }))
            expect(yield* trader.orders).toEqual([])

            const gtc = yield* trader.bind({ above: 0.004, tif: "gtc" })
            yield* trader.runOnce(gtc)
            const [first] = yield* trader.orders
            expect(first).toMatchObject({ status: "open", order_type: "limit", time_in_force: "gtc", side: "sell" })
            yield* trader.runOnce(gtc, 2)
            const [second, replaced] = yield* trader.orders
            expect(replaced).toMatchObject({ id: first.id, status: "cancelled", error: "replaced by a later decision" })
            expect(second).toMatchObject({ status: "open", order_type: "limit" })
            yield* trader.disable(gtc)

            let filled: any
            yield* hourByHour(
              Effect.map(trader.orders, (orders) => (filled = orders.find((o) => o.status === "filled")) !== undefined)
            )
            // A resting limit fills at its level, with the maker fee, sized then: half the free cash, in whole
            // lots of the simulated BTC (0.0001, about 4 USD here).
            expect(filled).toMatchObject({ id: second.id, price: second.entry_price, side: "sell" })
            expect(filled.fee).toBeCloseTo(filled.quantity * filled.price * 0.0001, 7)
            expect(filled.quantity * filled.price).toBeLessThanOrEqual(5_000 / (1 + 0.00035))
            expect(filled.quantity * filled.price).toBeGreaterThan(5_000 / (1 + 0.00035) - 0.0001 * filled.price)
            expect(Number.isInteger(Math.round(filled.quantity * 1e8) / 1e4)).toBe(true)
            const [position] = yield* trader.positions
            expect(position).toMatchObject({ side: "short", size: filled.quantity, entry_price: filled.price })
          }),
        180_000
      )

      it.effect(
        "a paper trailing stop follows the best mark the watcher sees and closes the position as a stop",
        () =>
          Effect.gen(function*() {
            const trader = yield* paperTrader(`export function decide(data) {
              return data.position ? { operation: "hold" } : { operation: "sell", target_portion_of_balance: 0.5, trailing_stop: 0.005 }
            }`)
            const binding = yield* trader.bind()
            yield* trader.runOnce(binding)
            yield* trader.disable(binding)
            const [position] = yield* trader.positions
            expect(position).toMatchObject({ side: "short", trailing_stop: 0.005, trail_best: position.entry_price })
            const bests: Array<number> = [position.trail_best]
            let orders: Array<any> = []
            yield* hourByHour(Effect.gen(function*() {
              orders = yield* trader.orders
              const [now] = yield* trader.positions
              if (now !== undefined) bests.push(now.trail_best)
              return exited(orders)
            }))
            const [exit] = orders
            expect(exit).toMatchObject({ trigger: "stop_loss", side: "buy", status: "filled" })
            // The stop was 0.5 % above the lowest mark seen before the one that crossed it, and a short's best only falls.
            const best = exit.trigger_price / 1.005
            expect(bests.some((b) => Math.abs(b - best) < 1e-6)).toBe(true)
            expect(bests).toEqual([...bests].sort((a, b) => b - a))
            // A stop fills at its level with the slippage against it.
            expect(exit.price).toBeCloseTo(exit.trigger_price * 1.0005, 6)
          }),
        180_000
      )

      for (const [mode, portion] of [["isolated", 0.5], ["cross", 0.9]] as const) {
        it.effect(
          `a ${mode} paper position is liquidated at the venue's maintenance margin; the liquidation fee takes what is left`,
          () =>
            Effect.gen(function*() {
              const trader = yield* paperTrader(
                `export function decide(data) {
                  return data.position ? { operation: "hold" } : { operation: "sell", target_portion_of_balance: ${portion}, leverage: 50 }
                }`,
                { max_leverage: 100, margin_mode: mode }
              )
              expect(trader.account.venue1_enabled).toBe(false)
              const binding = yield* trader.bind()
              yield* trader.runOnce(binding)
              yield* trader.disable(binding)
              // Its liquidation price hangs on the margin mode: that cannot change under an open position.
              expectError(
                yield* call("PUT", `/api/account/${trader.account.id}`, {
                  token: trader.token,
                  body: { margin_mode: mode === "cross" ? "isolated" : "cross" }
                }),
                409,
                "conflict"
              )
              const [position] = yield* trader.positions
              // The simulated BTC rises over the days after: a short at 50x is liquidated within hours.
              expect(position).toMatchObject({ side: "short", leverage: 50 })
              expect(position.size * position.entry_price).toBeGreaterThan(50_000)
              let orders: Array<any> = []
              yield* hourByHour(Effect.map(trader.orders, (all) => exited(orders = all)))
              const [exit, entry] = orders
              expect(exit).toMatchObject({ trigger: "liquidation", route: "paper", side: "buy", status: "filled" })
              const paid = (yield* trader.funding).reduce((sum: number, f: any) => sum + f.amount, 0)
              const free = 10_000 - position.margin - entry.fee + paid
              // About 125 000 of notional or more: venue2's second bracket or above, which keeps 0.4 % of the
              // first 50 000 and 0.5 % of the rest. backing + size · (entry − P) = 0.005 · size · P − 50,
              // where the backing is the margin, and with cross margin the free cash too.
              const backing = position.margin + (mode === "cross" ? free : 0)
              expect(position.size * exit.trigger_price).toBeLessThan(600_000)
              const liquidation = (position.size * position.entry_price + backing + 50) / (position.size * 1.005)
              expect(exit.trigger_price).toBeCloseTo(liquidation, 6)
              expect(exit.price).toBe(exit.trigger_price)
              expect(exit.quantity).toBe(position.size)
              const after = (yield* call("GET", `/api/account/${trader.account.id}`, { token: trader.token })).body
              // What backed it is gone: the fee (1.25 % of the notional) is more than the 0.5 % left.
              expect(after.frozen_cash).toBe(0)
              expect(after.current_cash).toBeCloseTo(mode === "cross" ? 0 : free, 6)
              expect(yield* trader.positions).toEqual([])
            }),
          // Walked an hour at a time until liquidation (about 40 hours).
          180_000
        )
      }
    })
  })
}
