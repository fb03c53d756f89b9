import { describe, expect, layer } from "@effect/vitest"
import { defaultSandboxLimits } from "@trading-platform/core"
import { backtestThreadCounts, testStorages } from "@trading-platform/core/testing"
import { Effect } from "effect"
import { createAccount } from "../support/Accounts.js"
import {
  BacktestServer,
  isFinished,
  shortRun,
  stuckProgram,
  throwingProgram,
  tradingProgram,
  untilNoBusyBacktestThreads,
  waitForBacktest
} from "../support/Backtests.js"
import { call, expectError, signUp } from "../support/TestServer.js"

/** A user with one program of the given code. */
const withProgram = (code = tradingProgram) =>
  Effect.gen(function*() {
    const user = yield* signUp()
    const created = yield* call("POST", "/api/programs", { token: user.token, body: { name: "Every tenth bar", code } })
    expect(created.status).toBe(201)
    return { ...user, programId: created.body.id as number }
  })

const submit = (token: string, programId: number, body: Record<string, unknown> = {}) =>
  call("POST", `/api/programs/${programId}/backtest`, { token, body: { ...shortRun, ...body } })

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`backtests over ${storage.name}`, () => {
    layer(BacktestServer(storage), { timeout: "120 seconds" })((it) => {
      it.effect("POST /api/programs/:id/backtest answers 202 with the queued backtest and its defaults", () =>
        Effect.gen(function*() {
          const { programId, token } = yield* withProgram()
          const reply = yield* submit(token, programId)
          expect(reply.status).toBe(202)
          expect(reply.body).toMatchObject({
            status: "queued",
            program_id: programId,
            account_id: null,
            symbol: "BTC",
            exchange: "venue1",
            timeframe: "1h",
            start: "2025-01-01T00:00:00.000Z",
            end: "2025-01-15T00:00:00.000Z",
            initial_balance: 10000,
            fee_rate: 0.00035,
            slippage: 0.0005,
            leverage: 1,
            warmup_bars: 500,
            warmed_up_bars: null,
            progress: 0,
            metrics: null,
            equity_curve: [],
            trades: [],
            started_at: null,
            finished_at: null
          })
        }))

      it.effect("a warm-up feeds the program the bars before start: a 30-bar average trades over one day, and does not without it", () =>
        Effect.gen(function*() {
          const sma = `export function decide(data) {
  if (data.candles.length < 30) return { operation: "hold" }
  const closes = data.candles.slice(-30).map((c) => c.close)
  const mean = closes.reduce((a, b) => a + b, 0) / 30
  const above = data.bar.close > mean
  if (above && !data.position) return { operation: "buy", target_portion_of_balance: 0.5 }
  if (!above && data.position) return { operation: "close" }
  return { operation: "hold" }
}
`
          const { programId, token } = yield* withProgram(sma)
          const oneDay = { start: "2025-01-01T00:00:00Z", end: "2025-01-02T00:00:00Z" }
          const warmed = yield* submit(token, programId, oneDay)
          const cold = yield* submit(token, programId, { ...oneDay, warmup_bars: 0 })
          const [w, c] = [
            yield* waitForBacktest(token, warmed.body.id, isFinished),
            yield* waitForBacktest(token, cold.body.id, isFinished)
          ]
          expect([w.status, w.warmup_bars, w.warmed_up_bars]).toEqual(["completed", 500, 500])
          expect(w.equity_curve).toHaveLength(24)
          expect(w.fills.length).toBeGreaterThan(0)
          expect([c.status, c.warmup_bars, c.warmed_up_bars, c.fills]).toEqual(["completed", 0, 0, []])
          expectError(yield* submit(token, programId, { warmup_bars: 501 }), 400, "invalid_input")
        }))

      it.effect("a queued backtest runs to completion with metrics, its equity curve and trades", () =>
        Effect.gen(function*() {
          const { programId, token } = yield* withProgram()
          const { id } = (yield* submit(token, programId, { initial_balance: 5000 })).body
          const done = yield* waitForBacktest(token, id, isFinished)
          expect(done.status).toBe("completed")
          expect(done.progress).toBe(1)
          expect(done.attempts).toBe(1)
          expect(done.error).toBeNull()
          expect(Object.keys(done.metrics).sort()).toEqual([
            "average_trade_pnl",
            "buy_and_hold_percent",
            "calmar",
            "exposure_percent",
            "longest_drawdown_bars",
            "max_drawdown_percent",
            "profit_factor",
            "sharpe",
            "sortino",
            "total_fees",
            "total_funding",
            "total_pnl",
            "total_pnl_percent",
            "total_trades",
            "win_rate"
          ])
          expect(done).toMatchObject({ fill_timing: "next_open", slippage_model: "fixed", maker_fee_rate: 0.0001 })
          // venue1 pays funding every hour: a strategy holding positions pays or receives some.
          expect(done.metrics.total_funding).not.toBe(0)
          expect(done.trades.reduce((sum: number, t: any) => sum + t.funding, 0)).toBeCloseTo(
            done.metrics.total_funding,
            6
          )
          expect(done.metrics.total_trades).toBe(done.trades.length)
          expect(done.trades.length).toBeGreaterThan(5)
          expect(done.metrics.win_rate).toBeGreaterThanOrEqual(0)
          expect(done.metrics.win_rate).toBeLessThanOrEqual(1)
          expect(done.equity_curve).toHaveLength(336)
          expect(done.equity_curve[0].time).toBe(Date.parse(shortRun.start))
          expect(done.final_balance).toBeCloseTo(5000 + done.metrics.total_pnl, 6)
          expect(done.started_at).not.toBeNull()
          expect(done.finished_at).not.toBeNull()
        }))

      it.effect("a backtest over a list of symbols trades them from one balance, reading a longer timeframe, with each symbol's share", () =>
        Effect.gen(function*() {
          // Holds each symbol while its last closed 4h candle rose.
          const rotation = `export function decide(data) {
  const out = []
  for (const symbol of Object.keys(data.symbols)) {
    const { position, timeframes } = data.symbols[symbol]
    const fours = timeframes["4h"]
    if (fours.length < 2) continue
    const up = fours[fours.length - 1].close > fours[fours.length - 2].close
    if (up && !position) out.push({ symbol, operation: "buy", target_portion_of_balance: 0.4 })
    if (!up && position) out.push({ symbol, operation: "close" })
  }
  return out
}
`
          const { programId, token } = yield* withProgram(rotation)
          const reply = yield* submit(token, programId, {
            symbol: undefined,
            symbols: ["BTC", "ETH"],
            timeframes: ["4h"]
          })
          expect(reply.status).toBe(202)
          expect(reply.body).toMatchObject({
            symbol: "BTC",
            symbols: ["BTC", "ETH"],
            timeframes: ["4h"],
            per_symbol: []
          })
          const done = yield* waitForBacktest(token, reply.body.id, isFinished)
          expect(done.status).toBe("completed")
          expect(done.per_symbol.map((m: any) => m.symbol)).toEqual(["BTC", "ETH"])
          for (const symbol of ["BTC", "ETH"]) {
            const trades = done.trades.filter((t: any) => t.symbol === symbol)
            expect(trades.length, symbol).toBeGreaterThan(3)
            const share = done.per_symbol.find((m: any) => m.symbol === symbol)
            expect(share.total_trades).toBe(trades.length)
            expect(share.total_pnl).toBeCloseTo(trades.reduce((sum: number, t: any) => sum + t.pnl, 0), 6)
          }
          expect(new Set(done.fills.map((f: any) => f.symbol))).toEqual(new Set(["BTC", "ETH"]))
          // One balance: the curve ends where the cash ends, both symbols' trades included.
          expect(done.final_balance).toBeCloseTo(10_000 + done.metrics.total_pnl, 6)
          expect(done.metrics.total_trades).toBe(done.trades.length)
          const history = (yield* call("GET", "/api/programs/backtest/history", { token })).body.backtests
          expect(history[0]).toMatchObject({ id: done.id, symbols: ["BTC", "ETH"], timeframes: ["4h"] })
        }))

      it.effect("symbols and timeframes that cannot be run answer 400 invalid_input naming the field, an unlisted symbol 422", () =>
        Effect.gen(function*() {
          const { programId, token } = yield* withProgram()
          const issue = (body: Record<string, unknown>) =>
            Effect.map(submit(token, programId, body), (reply) => {
              expectError(reply, 400, "invalid_input")
              return reply.body.issues[0].path
            })
          expect(yield* issue({ symbols: ["ETH"] })).toBe("symbol")
          expect(yield* issue({ symbol: undefined })).toBe("symbol")
          expect(yield* issue({ symbol: undefined, symbols: [] })).toBe("symbols")
          expect(yield* issue({ symbol: undefined, symbols: ["BTC", "BTC"] })).toBe("symbols")
          expect(yield* issue({ symbol: undefined, symbols: Array.from({ length: 11 }, (_, i) => `S${i}`) })).toBe(
            "symbols"
          )
          expect(yield* issue({ timeframes: ["30m"] })).toBe("timeframes.0")
          expect(yield* issue({ timeframes: ["4h", "4h"] })).toBe("timeframes")
          expect(yield* issue({ timeframes: ["1d", "2d"] })).toBe("timeframes.1")
          const unlisted = yield* submit(token, programId, { symbol: undefined, symbols: ["BTC", "NOPE"] })
          expectError(unlisted, 422, "symbol_not_listed")
          expect(unlisted.body.symbols).toEqual(["NOPE"])
        }))

      it.effect("GET /api/programs/backtest/:id/trades pages the trades the result embeds, with their total", () =>
        Effect.gen(function*() {
          const { programId, token } = yield* withProgram()
          const { id } = (yield* submit(token, programId)).body
          const early = yield* call("GET", `/api/programs/backtest/${id}/trades`, { token })
          expect(early.status).toBe(200)
          const done = yield* waitForBacktest(token, id, isFinished)
          expect(done.trades.length).toBeGreaterThan(5)
          const all = yield* call("GET", `/api/programs/backtest/${id}/trades`, { token })
          expect(all.body).toEqual({ trades: done.trades, total: done.trades.length })
          const page = yield* call("GET", `/api/programs/backtest/${id}/trades?limit=2&offset=3`, { token })
          expect(page.status).toBe(200)
          expect(page.body).toEqual({ trades: done.trades.slice(3, 5), total: done.trades.length })
          const past = yield* call("GET", `/api/programs/backtest/${id}/trades?offset=${done.trades.length}`, { token })
          expect(past.body).toEqual({ trades: [], total: done.trades.length })
          expectError(
            yield* call("GET", `/api/programs/backtest/${id}/trades?limit=0`, { token }),
            400,
            "invalid_input"
          )
          const other = yield* signUp("other")
          expectError(
            yield* call("GET", `/api/programs/backtest/${id}/trades`, { token: other.token }),
            403,
            "forbidden"
          )
          expectError(yield* call("GET", "/api/programs/backtest/999999/trades", { token }), 404, "not_found")
          expectError(yield* call("GET", `/api/programs/backtest/${id}/trades`), 401, "unauthorized")
        }))

      it.effect("the same request gives the same result", () =>
        Effect.gen(function*() {
          const { programId, token } = yield* withProgram()
          const first = (yield* submit(token, programId)).body.id
          const second = (yield* submit(token, programId)).body.id
          const a = yield* waitForBacktest(token, first, isFinished)
          const b = yield* waitForBacktest(token, second, isFinished)
          expect(b.metrics).toEqual(a.metrics)
          expect(b.trades).toEqual(a.trades)
        }))

      it.effect("a long equity curve is downsampled to at most 1000 points, keeping the first and last bar", () =>
        Effect.gen(function*() {
          const { programId, token } = yield* withProgram()
          const run = { timeframe: "15m", start: "2025-01-01T00:00:00Z", end: "2025-02-01T00:00:00Z" }
          const { id } = (yield* submit(token, programId, run)).body
          const done = yield* waitForBacktest(token, id, isFinished)
          expect(done.status).toBe("completed")
          expect(done.equity_curve).toHaveLength(1000)
          expect(done.equity_curve[0].time).toBe(Date.parse(run.start))
          expect(done.equity_curve[999].time).toBe(Date.parse(run.end) - 15 * 60_000)
        }))

      it.effect("a program that throws fails its backtest with the reason, without another attempt", () =>
        Effect.gen(function*() {
          const { programId, token } = yield* withProgram(throwingProgram)
          const { id } = (yield* submit(token, programId)).body
          const done = yield* waitForBacktest(token, id, isFinished)
          expect(done).toMatchObject({ status: "failed", attempts: 1, metrics: null })
          expect(done.error).toMatch(/threw/)
          expect(done.error).toMatch(/boom at bar 6/)
        }))

      it.effect("cancelling a running backtest terminates its thread", () =>
        Effect.gen(function*() {
          const { programId, token } = yield* withProgram()
          // Eleven months of minutes (481k bars): it would run far longer than the test.
          const long = { timeframe: "1m", start: "2024-06-01T00:00:00Z", end: "2025-05-01T00:00:00Z" }
          const { id } = (yield* submit(token, programId, long)).body
          yield* waitForBacktest(token, id, (body) => body.status === "running" && body.progress > 0)
          expect(backtestThreadCounts().busy).toBe(1)
          expect((yield* call("POST", `/api/programs/backtest/${id}/cancel`, { token })).status).toBe(200)
          // Every thread ending includes the cancelled run's, which would otherwise go on for minutes.
          yield* untilNoBusyBacktestThreads()
        }))

      it.effect("POST /api/programs/:id/backtest with bad input answers 400 invalid_input", () =>
        Effect.gen(function*() {
          const { programId, token } = yield* withProgram()
          expectError(yield* submit(token, programId, { end: shortRun.start }), 400, "invalid_input")
          expectError(yield* submit(token, programId, { start: "2025-02-01T00:00:00Z" }), 400, "invalid_input")
          expectError(yield* submit(token, programId, { start: "yesterday" }), 400, "invalid_input")
          expectError(yield* submit(token, programId, { timeframe: "2h" }), 400, "invalid_input")
          expectError(yield* submit(token, programId, { exchange: "venue9" }), 400, "invalid_input")
          expectError(yield* submit(token, programId, { fee_rate: -1 }), 400, "invalid_input")
          // The rulebook's terms: a fraction, and one of the named choices.
          expectError(yield* submit(token, programId, { maker_fee_rate: 0.5 }), 400, "invalid_input")
          expectError(yield* submit(token, programId, { slippage_model: "quadratic" }), 400, "invalid_input")
          expectError(yield* submit(token, programId, { fill_timing: "tomorrow" }), 400, "invalid_input")
          expectError(yield* submit(token, programId, { margin_mode: "portfolio" }), 400, "invalid_input")
          expectError(yield* submit(token, programId, { leverage: 500 }), 400, "invalid_input")
          expectError(yield* submit(token, programId, { symbol: 42 }), 400, "invalid_input")
          expectError(
            yield* call("POST", `/api/programs/${programId}/backtest`, { token, body: { symbol: "BTC" } }),
            400,
            "invalid_input"
          )
          expectError(
            yield* call("POST", `/api/programs/abc/backtest`, { token, body: shortRun }),
            400,
            "invalid_input"
          )
        }))

      it.effect("a range over a leap year of one-minute bars (527040) answers 400 invalid_input naming the limit", () =>
        Effect.gen(function*() {
          const { programId, token } = yield* withProgram()
          const reply = yield* submit(token, programId, {
            timeframe: "1m",
            start: "2023-01-01T00:00:00Z",
            end: "2025-01-01T00:00:00Z"
          })
          expectError(reply, 400, "invalid_input")
          expect(reply.body.issues).toEqual([{
            path: "end",
            message: "must be at most 527040 bars of the timeframe after start"
          }])
        }))

      it.effect("an unknown symbol answers 422 symbol_not_listed naming it, as every endpoint does", () =>
        Effect.gen(function*() {
          const { programId, token } = yield* withProgram()
          const reply = yield* submit(token, programId, { symbol: "NOPE" })
          expectError(reply, 422, "symbol_not_listed")
          expect(reply.body.symbols).toEqual(["NOPE"])
        }))

      it.effect("another user's program answers 403 and an unknown program 404", () =>
        Effect.gen(function*() {
          const { programId } = yield* withProgram()
          const other = yield* signUp()
          expectError(yield* submit(other.token, programId), 403, "forbidden")
          expectError(yield* submit(other.token, 999_999), 404, "not_found")
        }))

      it.effect("account_id: another user's account answers 403, an unknown one 404, leverage over its max 422", () =>
        Effect.gen(function*() {
          const { programId, token } = yield* withProgram()
          const other = yield* signUp()
          const theirs = yield* createAccount(other.token)
          expectError(yield* submit(token, programId, { account_id: theirs.id }), 403, "forbidden")
          expectError(yield* submit(token, programId, { account_id: 999_999 }), 404, "not_found")
          const mine = yield* createAccount(token, { max_leverage: 5, default_leverage: 2 })
          expectError(yield* submit(token, programId, { account_id: mine.id, leverage: 10 }), 422, "leverage_too_high")
          const ok = yield* submit(token, programId, { account_id: mine.id, leverage: 5 })
          expect(ok.status).toBe(202)
          expect(ok.body.account_id).toBe(mine.id)
        }))

      it.effect("leverage above the symbol's cap on the backtest's venue answers 422 leverage_too_high, a dataset's by its venue", () =>
        Effect.gen(function*() {
          const { programId, token } = yield* withProgram()
          // The simulated venue1 caps BTC at 50x (its first margin tier); venue2 at 125x.
          const refused = yield* submit(token, programId, { exchange: "venue1", leverage: 125 })
          expectError(refused, 422, "leverage_too_high")
          expect(refused.body.error).toBe("Leverage 125 is above venue1's cap of 50 on BTC")
          expect((yield* submit(token, programId, { exchange: "venue1", leverage: 50 })).status).toBe(202)
          expect((yield* submit(token, programId, { exchange: "venue2", leverage: 125 })).status).toBe(202)
          // A dataset's trades follow its venue's rules.
          const hour = 3_600_000
          const from = Date.parse(shortRun.start)
          const csv = Array.from({ length: 48 }, (_, i) => {
            const t = from + i * hour
            return [t, 100 + i, 101 + i, 99 + i, 100 + i, 10].join(",")
          }).join("\n")
          for (const venue of ["venue1", "venue2"]) {
            const imported = yield* call(
              "POST",
              `/api/market/candles/import?name=cap-${venue}&symbol=BTC&timeframe=1h&venue=${venue}`,
              { token, raw: `time,open,high,low,close,volume\n${csv}`, headers: { "content-type": "text/csv" } }
            )
            expect(imported.status).toBe(200)
          }
          const onDataset = (venue: string, leverage: number) =>
            submit(token, programId, {
              exchange: `dataset:cap-${venue}`,
              end: new Date(from + 48 * hour).toISOString(),
              leverage
            })
          expectError(yield* onDataset("venue1", 125), 422, "leverage_too_high")
          expect((yield* onDataset("venue1", 50)).status).toBe(202)
          expect((yield* onDataset("venue2", 125)).status).toBe(202)
        }))

      it.effect("every backtest endpoint without a token answers 401 unauthorized", () =>
        Effect.gen(function*() {
          expectError(yield* call("POST", "/api/programs/1/backtest", { body: shortRun }), 401, "unauthorized")
          expectError(yield* call("GET", "/api/programs/backtest/1"), 401, "unauthorized")
          expectError(yield* call("POST", "/api/programs/backtest/1/cancel"), 401, "unauthorized")
          expectError(yield* call("GET", "/api/programs/backtest/history"), 401, "unauthorized")
        }))

      it.effect("GET and cancel of another user's backtest answer 403, of an unknown one 404, of a bad id 400", () =>
        Effect.gen(function*() {
          const { programId, token } = yield* withProgram()
          const { id } = (yield* submit(token, programId)).body
          const other = yield* signUp()
          expectError(yield* call("GET", `/api/programs/backtest/${id}`, { token: other.token }), 403, "forbidden")
          expectError(
            yield* call("POST", `/api/programs/backtest/${id}/cancel`, { token: other.token }),
            403,
            "forbidden"
          )
          expectError(yield* call("GET", `/api/programs/backtest/999999`, { token }), 404, "not_found")
          expectError(yield* call("POST", `/api/programs/backtest/999999/cancel`, { token }), 404, "not_found")
          expectError(yield* call("GET", `/api/programs/backtest/x1`, { token }), 400, "invalid_input")
        }))

      it.effect("cancelling a finished backtest answers 409 conflict and leaves it as it was", () =>
        Effect.gen(function*() {
          const { programId, token } = yield* withProgram()
          const { id } = (yield* submit(token, programId)).body
          const done = yield* waitForBacktest(token, id, isFinished)
          expect(done.status).toBe("completed")
          expectError(yield* call("POST", `/api/programs/backtest/${id}/cancel`, { token }), 409, "conflict")
          expect((yield* call("GET", `/api/programs/backtest/${id}`, { token })).body).toEqual(done)
        }))

      it.effect("POST /api/programs/backtest/:id/cancel cancels a backtest that has not finished", () =>
        Effect.gen(function*() {
          const { programId, token } = yield* withProgram()
          // Eleven months of minutes (481k bars): far longer than the test, so it is still queued or running.
          const long = { timeframe: "1m", start: "2024-06-01T00:00:00Z", end: "2025-05-01T00:00:00Z" }
          const { id } = (yield* submit(token, programId, long)).body
          const reply = yield* call("POST", `/api/programs/backtest/${id}/cancel`, { token })
          expect(reply.status).toBe(200)
          expect(reply.body).toMatchObject({ id, status: "cancelled", metrics: null })
          expect(reply.body.finished_at).not.toBeNull()
          expectError(yield* call("POST", `/api/programs/backtest/${id}/cancel`, { token }), 409, "conflict")
        }))

      it.effect("GET /api/programs/backtest/history lists the caller's backtests, newest first, with filters", () =>
        Effect.gen(function*() {
          const { programId, token } = yield* withProgram()
          const second = yield* call("POST", "/api/programs", { token, body: { name: "Second", code: tradingProgram } })
          const a = (yield* submit(token, programId)).body.id
          const b = (yield* submit(token, second.body.id)).body.id
          yield* waitForBacktest(token, a, isFinished)
          yield* waitForBacktest(token, b, isFinished)
          const c = (yield* submit(token, programId, {
            timeframe: "1m",
            start: "2024-06-01T00:00:00Z",
            end: "2025-05-01T00:00:00Z"
          })).body.id
          const cancelReply = yield* call("POST", `/api/programs/backtest/${c}/cancel`, { token })
          expect({ status: cancelReply.status, body: cancelReply.body }).toMatchObject({ status: 200 })
          yield* signUp().pipe(Effect.flatMap((other) => submit(other.token, programId)))

          const all = yield* call("GET", "/api/programs/backtest/history", { token })
          expect(all.status).toBe(200)
          expect(all.body.backtests.map((x: any) => x.id)).toEqual([c, b, a])
          const completed = all.body.backtests.find((x: any) => x.id === a)
          expect(Object.keys(completed).sort()).toEqual([
            "account_id",
            "created_at",
            "exchange",
            "finished_at",
            "id",
            "params",
            "program_id",
            "started_at",
            "status",
            "symbol",
            "symbols",
            "timeframe",
            "timeframes",
            "total_pnl",
            "total_trades",
            "win_rate"
          ])
          expect(completed).toMatchObject({
            status: "completed",
            program_id: programId,
            account_id: null,
            symbols: ["BTC"],
            timeframes: []
          })
          // History reads the summary columns, not the result: the same numbers as the result's metrics.
          const full = (yield* call("GET", `/api/programs/backtest/${a}`, { token })).body
          expect(completed).toMatchObject({
            total_pnl: full.metrics.total_pnl,
            total_trades: full.metrics.total_trades,
            win_rate: full.metrics.win_rate
          })

          const byProgram = yield* call("GET", `/api/programs/backtest/history?program_id=${programId}`, { token })
          expect(byProgram.body.backtests.map((x: any) => x.id)).toEqual([c, a])
          const cancelled = yield* call("GET", "/api/programs/backtest/history?status=cancelled", { token })
          expect(cancelled.body.backtests.map((x: any) => x.id)).toEqual([c])
          const page = yield* call("GET", "/api/programs/backtest/history?limit=1&offset=1", { token })
          expect(page.body.backtests.map((x: any) => x.id)).toEqual([b])
        }))

      it.effect("GET /api/programs/backtest/history filtered by another user's program or account is 403, an unknown one 404", () =>
        Effect.gen(function*() {
          const { token } = yield* withProgram()
          const other = yield* withProgram()
          const theirAccount = yield* createAccount(other.token)
          expectError(
            yield* call("GET", `/api/programs/backtest/history?program_id=${other.programId}`, { token }),
            403,
            "forbidden"
          )
          expectError(
            yield* call("GET", `/api/programs/backtest/history?account_id=${theirAccount.id}`, { token }),
            403,
            "forbidden"
          )
          expectError(
            yield* call("GET", "/api/programs/backtest/history?program_id=999999", { token }),
            404,
            "not_found"
          )
          expectError(
            yield* call("GET", "/api/programs/backtest/history?account_id=999999", { token }),
            404,
            "not_found"
          )
        }))

      it.effect("GET /api/programs/backtest/history with a bad filter answers 400 invalid_input", () =>
        Effect.gen(function*() {
          const { token } = yield* withProgram()
          expectError(yield* call("GET", "/api/programs/backtest/history?status=done", { token }), 400, "invalid_input")
          expectError(
            yield* call("GET", "/api/programs/backtest/history?program_id=x", { token }),
            400,
            "invalid_input"
          )
          expectError(yield* call("GET", "/api/programs/backtest/history?limit=501", { token }), 400, "invalid_input")
        }))
    })
  })
}

// On QuickJS, with a 1 s safety net, so the watchdog (twice the net) stops the stuck call soon; one attempt only.
describe("a backtest whose program is stuck in calls QuickJS cannot interrupt", () => {
  const storage = testStorages[0]!
  layer(
    BacktestServer(storage, { maxAttempts: 1 }, {
      sandbox: { ...defaultSandboxLimits, runtime: "quickjs", wallMillisPerCall: 1_000 }
    }),
    { timeout: "120 seconds" }
  )((it) => {
    it.effect("is stopped by its thread's watchdog, which is not the program's verdict: handed back, then given up saying why; the server answers meanwhile", () =>
      Effect.gen(function*() {
        const { programId, token } = yield* withProgram(stuckProgram)
        const { id } = (yield* submit(token, programId)).body
        yield* waitForBacktest(token, id, (body) => body.status === "running")
        // Every round trip counted here was served while the run was still going.
        let answeredWhileRunning = 0
        for (;;) {
          const health = yield* call("GET", "/api/health")
          expect(health.status).toBe(200)
          const current = yield* call("GET", `/api/programs/backtest/${id}`, { token })
          if (current.body.status !== "running") break
          answeredWhileRunning++
        }
        expect(answeredWhileRunning).toBeGreaterThan(10)
        const done = yield* waitForBacktest(token, id, isFinished)
        expect(done).toMatchObject({ status: "failed", attempts: 2, metrics: null })
        expect(done.error).toMatch(
          /^Gave up after 1 attempts: The program was stuck in one call of decide for over 2000 ms \(the sandbox's wall-clock safety net\)/
        )
        expect(done.error).not.toMatch(/cpu_budget_exceeded/)
      }))
  })
})
