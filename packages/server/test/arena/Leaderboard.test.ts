import { describe, expect, layer } from "@effect/vitest"
import { testStorages } from "@trading-platform/core/testing"
import { Duration, Effect, TestClock } from "effect"
import { createAccount } from "../support/Accounts.js"
import { allFinished, AutomationServer, createProgram, waitForList, waitForRuns } from "../support/Automation.js"
import { call, expectError, signUp } from "../support/TestServer.js"

// A day: only manual runs fire these bindings.
const daily = 1440

/** Runs the binding by hand and waits for its runs to finish. */
const runNow = (token: string, program: number, binding: number, count: number) =>
  Effect.gen(function*() {
    const queued = yield* call("POST", `/api/programs/${program}/bindings/${binding}/run`, { token })
    expect(queued.status).toBe(202)
    return yield* waitForRuns(token, program, binding, allFinished(count))
  })

/**
 * Moves the test clock and waits for the refresher's pass at the new time to reach the leaderboard.
 * An hour at a time: a pass takes real time, and a longer move would pass its next wake-up meanwhile.
 */
const refreshedAfter = (token: string, move: Duration.DurationInput, accounts: number) =>
  Effect.gen(function*() {
    yield* TestClock.adjust(move)
    const now = yield* TestClock.currentTimeMillis
    return yield* waitForList(
      token,
      "/api/arena/leaderboard?window=all",
      "entries",
      (entries) => entries.length === accounts && entries.every((e) => Date.parse(e.measured_at) >= now)
    )
  })

// Everything passes hourly on the test clock, so that moving it by hours costs a pass an hour.
const hourly = {
  pollInterval: Duration.hours(1),
  watchInterval: Duration.hours(1),
  pnlRefreshInterval: Duration.hours(1)
}

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`the arena leaderboard over ${storage.name}`, () => {
    layer(AutomationServer(storage, hourly), { timeout: "120 seconds" })((it) => {
      it.effect(
        "ranks every user's dashboard accounts by return, with drawdown, Sharpe, trades, win rate and an hourly curve",
        () =>
          Effect.gen(function*() {
            const ai = yield* signUp("ai")
            const quant = yield* signUp("quant")
            const analyst = yield* createAccount(ai.token, { name: "Analyst" })
            const hidden = yield* createAccount(ai.token, { name: "Hidden" })
            yield* call("PUT", `/api/account/${hidden.id}`, { token: ai.token, body: { show_on_dashboard: false } })
            const trader = yield* createAccount(quant.token, { name: "Trend", account_type: "MANUAL" })
            const program = yield* createProgram(quant.token)
            const binding = yield* call("POST", `/api/programs/${program}/bindings`, {
              token: quant.token,
              body: { account_id: trader.id, symbols: ["BTC"], interval_minutes: daily, leverage: 3 }
            })
            expect(binding.status).toBe(201)
            // Bought before the first measurement: the program's account moves with the market from there.
            yield* runNow(quant.token, program, binding.body.id, 1)

            const first = yield* refreshedAfter(ai.token, "1 hour", 2)
            expect(first.map((e) => e.name).sort()).toEqual(["Analyst", "Trend"])
            for (let hour = 0; hour < 3; hour++) yield* refreshedAfter(ai.token, "1 hour", 2)
            // Closes the position: one trade.
            yield* call("PUT", `/api/programs/${program}/bindings/${binding.body.id}`, {
              token: quant.token,
              body: { params: { close: true } }
            })
            yield* runNow(quant.token, program, binding.body.id, 2)
            yield* refreshedAfter(ai.token, "1 hour", 2)

            // Every user sees the same board: it is the arena.
            const board = (yield* call("GET", "/api/arena/leaderboard?window=all", { token: quant.token })).body
            expect(board).toMatchObject({ window: "all", from: new Date(0).toISOString(), total: 2 })
            expect(board.to).toBe(new Date(yield* TestClock.currentTimeMillis).toISOString())
            const [best, second] = board.entries
            expect([best.rank, second.rank]).toEqual([1, 2])
            expect(best.return_percent).toBeGreaterThanOrEqual(second.return_percent)
            const byName = Object.fromEntries(board.entries.map((e: any) => [e.name, e]))
            expect(byName.Analyst).toMatchObject({
              account_id: analyst.id,
              owner: ai.username,
              account_type: "AI",
              model: "builtin",
              ai_trading: false,
              program_bindings: 0,
              equity: analyst.initial_capital,
              start_equity: analyst.initial_capital,
              return_percent: 0,
              max_drawdown_percent: 0,
              sharpe: 0,
              trades: 0,
              win_rate: null
            })
            const trend = byName.Trend
            expect(trend).toMatchObject({
              account_id: trader.id,
              owner: quant.username,
              account_type: "MANUAL",
              model: null,
              program_bindings: 1,
              trades: 1
            })
            expect([0, 1]).toContain(trend.win_rate)
            // Five measured hours; the curve ends at the equity now, and the return is measured from the first.
            expect(trend.equity_curve).toHaveLength(5)
            expect(trend.equity_curve.at(-1)).toEqual({ at: trend.measured_at, equity: trend.equity })
            expect(trend.return_percent).toBeCloseTo((trend.equity / trend.start_equity - 1) * 100, 8)
            expect(trend.equity).not.toBe(trend.start_equity)
            expect(trend.sharpe).not.toBeNull()
            const account = (yield* call("GET", `/api/account/${trader.id}`, { token: quant.token })).body
            // Flat again: the equity is the cash.
            expect(trend.equity).toBeCloseTo(account.current_cash + account.frozen_cash, 6)
            const peakToTrough = (() => {
              let peak = trend.start_equity
              let worst = 0
              for (const p of trend.equity_curve) {
                peak = Math.max(peak, p.equity)
                worst = Math.max(worst, (peak - p.equity) / peak)
              }
              return worst * 100
            })()
            // Hours' highs and lows count too, so the drawdown is at least what the closes show.
            expect(trend.max_drawdown_percent).toBeGreaterThanOrEqual(peakToTrough - 1e-9)

            // A day's window starts from the last hour before it: a day later, the first four hours are out.
            const day = (yield* call("GET", "/api/arena/leaderboard?window=24h", { token: ai.token })).body
            expect(day.entries.find((e: any) => e.name === "Trend").equity_curve).toEqual(trend.equity_curve)
            yield* call("PUT", `/api/programs/${program}/bindings/${binding.body.id}`, {
              token: quant.token,
              body: { enabled: false }
            })
            let later: ReadonlyArray<any> = []
            for (let hour = 0; hour < 24; hour++) later = yield* refreshedAfter(ai.token, "1 hour", 2)
            const curve = later.find((e: any) => e.name === "Trend").equity_curve
            expect(curve).toHaveLength(5 + 24)
            const lastDay = (yield* call("GET", "/api/arena/leaderboard?window=24h", { token: ai.token })).body
            const trendDay = lastDay.entries.find((e: any) => e.name === "Trend")
            expect(trendDay.equity_curve).toEqual(curve.slice(4))
            expect(trendDay.start_equity).toBe(curve[3].equity)
            expect(trendDay.program_bindings).toBe(0)
            // The trade closed before the window.
            expect(trendDay.trades).toBe(0)
            expect(trendDay.win_rate).toBeNull()

            // One page at a time, ranks running on.
            const page = (yield* call("GET", "/api/arena/leaderboard?window=all&limit=1&offset=1", { token: ai.token }))
              .body
            expect(page.total).toBe(2)
            expect(page.entries.map((e: any) => [e.rank, e.account_id])).toEqual([[2, second.account_id]])

            // Off the dashboard, off the board.
            yield* call("PUT", `/api/account/${analyst.id}`, { token: ai.token, body: { show_on_dashboard: false } })
            const without = (yield* call("GET", "/api/arena/leaderboard?window=all", { token: ai.token })).body
            expect(without.entries.map((e: any) => e.name)).toEqual(["Trend"])
          }),
        180_000
      )

      it.effect("bad windows and pages answer 400; no token answers 401", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          expectError(yield* call("GET", "/api/arena/leaderboard?window=1y", { token }), 400, "invalid_input")
          expectError(yield* call("GET", "/api/arena/leaderboard?limit=0", { token }), 400, "invalid_input")
          expectError(yield* call("GET", "/api/arena/leaderboard?offset=-1", { token }), 400, "invalid_input")
          expectError(yield* call("GET", "/api/arena/leaderboard"), 401, "unauthorized")
          const defaults = yield* call("GET", "/api/arena/leaderboard", { token })
          expect(defaults.status).toBe(200)
          expect(defaults.body.window).toBe("7d")
        }))
    })
  })
}
