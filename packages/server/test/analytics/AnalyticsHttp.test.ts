import { describe, expect, layer } from "@effect/vitest"
import { testStorages } from "@trading-platform/core/testing"
import { Effect } from "effect"
import { createAccount } from "../support/Accounts.js"
import {
  BacktestServer,
  isFinished,
  shortRun,
  throwingProgram,
  tradingProgram,
  waitForBacktest
} from "../support/Backtests.js"
import { call, expectError, signUp } from "../support/TestServer.js"

const createProgram = (token: string, name: string, code = tradingProgram) =>
  Effect.map(call("POST", "/api/programs", { token, body: { name, code } }), (reply) => reply.body.id as number)

/** Runs a backtest to its end and answers it. */
const backtest = (token: string, programId: number, body: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const reply = yield* call("POST", `/api/programs/${programId}/backtest`, { token, body: { ...shortRun, ...body } })
    expect(reply.status).toBe(202)
    return yield* waitForBacktest(token, reply.body.id, isFinished)
  })

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`analytics over ${storage.name}`, () => {
    layer(BacktestServer(storage), { timeout: "120 seconds" })((it) => {
      it.effect(
        "GET /api/analytics/program-summary sums each program's completed backtests; win_rate is a fraction",
        () =>
          Effect.gen(function*() {
            const { token } = yield* signUp()
            const first = yield* createProgram(token, "First")
            const second = yield* createProgram(token, "Second")
            const broken = yield* createProgram(token, "Broken", throwingProgram)
            const a = yield* backtest(token, first)
            const b = yield* backtest(token, first, { symbol: "ETH" })
            const c = yield* backtest(token, second)
            expect((yield* backtest(token, broken)).status).toBe("failed")
            // Another user's backtests never count.
            const other = yield* signUp()
            yield* backtest(other.token, yield* createProgram(other.token, "Theirs"))

            const reply = yield* call("GET", "/api/analytics/program-summary?source=backtest", { token })
            expect(reply.status).toBe(200)
            expect(reply.body.dimension).toBe("program")
            expect(reply.body.filters).toEqual({ source: "backtest", from: null, to: null, account_id: null })
            expect(reply.body.items.map((i: any) => i.program_id)).toEqual([first, second])
            const [one, two] = reply.body.items
            expect(Object.keys(one).sort()).toEqual([
              "program_id",
              "program_name",
              "symbols_traded",
              "total_pnl",
              "total_trades",
              "win_rate"
            ])
            const wins = (x: any) => x.trades.filter((t: any) => t.pnl > 0).length
            expect(one).toMatchObject({
              program_name: "First",
              symbols_traded: 2,
              total_trades: a.metrics.total_trades + b.metrics.total_trades
            })
            expect(one.total_pnl).toBeCloseTo(a.metrics.total_pnl + b.metrics.total_pnl, 6)
            expect(one.win_rate).toBeCloseTo((wins(a) + wins(b)) / (a.trades.length + b.trades.length), 10)
            expect(two).toMatchObject({
              program_name: "Second",
              symbols_traded: 1,
              total_trades: c.metrics.total_trades
            })
            expect(two.win_rate).toBeCloseTo(c.metrics.win_rate, 10)

            const bySymbol =
              (yield* call("GET", "/api/analytics/program-summary?source=backtest&dimension=symbol", { token })).body
            expect(bySymbol.items.map((i: any) => [i.symbol, i.total_trades])).toEqual([
              ["BTC", a.metrics.total_trades + c.metrics.total_trades],
              ["ETH", b.metrics.total_trades]
            ])
            // Live trades are the default source; this user has none.
            expect((yield* call("GET", "/api/analytics/program-summary", { token })).body.items).toEqual([])
          }),
        120_000
      )

      it.effect(
        "GET /api/analytics/program-summary filters by account and by when backtests finished",
        () =>
          Effect.gen(function*() {
            const { token } = yield* signUp()
            const program = yield* createProgram(token, "Filtered")
            const account = yield* createAccount(token)
            const withAccount = yield* backtest(token, program, { account_id: account.id })
            yield* backtest(token, program)

            const byAccountDimension =
              (yield* call("GET", "/api/analytics/program-summary?source=backtest&dimension=account", { token })).body
            expect(byAccountDimension.items).toEqual([
              expect.objectContaining({
                account_id: account.id,
                account_name: account.name,
                total_trades: withAccount.metrics.total_trades
              })
            ])
            const byAccount = yield* call(
              "GET",
              `/api/analytics/program-summary?source=backtest&account_id=${account.id}`,
              { token }
            )
            expect(byAccount.body.filters).toEqual({ source: "backtest", from: null, to: null, account_id: account.id })
            expect(byAccount.body.items).toHaveLength(1)
            expect(byAccount.body.items[0].total_trades).toBe(withAccount.metrics.total_trades)

            const finished = Date.parse(withAccount.finished_at)
            const window = `from=${new Date(finished).toISOString()}&to=${new Date(finished + 1000).toISOString()}`
            const inside = yield* call(
              "GET",
              `/api/analytics/program-summary?source=backtest&dimension=program&${window}`,
              { token }
            )
            expect(inside.body.filters.from).toBe(new Date(finished).toISOString())
            expect(inside.body.items[0].total_trades).toBe(withAccount.metrics.total_trades * 2)
            const before = yield* call(
              "GET",
              `/api/analytics/program-summary?source=backtest&to=${new Date(finished).toISOString()}`,
              { token }
            )
            expect(before.body.items).toEqual([])
          }),
        120_000
      )

      it.effect("GET /api/analytics/program-summary for another user's account is 403, an unknown one 404", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const other = yield* signUp()
          const theirs = yield* createAccount(other.token)
          expectError(
            yield* call("GET", `/api/analytics/program-summary?account_id=${theirs.id}`, { token }),
            403,
            "forbidden"
          )
          expectError(
            yield* call("GET", "/api/analytics/program-summary?account_id=999999", { token }),
            404,
            "not_found"
          )
        }))

      it.effect("GET /api/analytics/program-summary with a bad parameter answers 400, without a token 401", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          expectError(
            yield* call("GET", "/api/analytics/program-summary?dimension=planet", { token }),
            400,
            "invalid_input"
          )
          expectError(
            yield* call("GET", "/api/analytics/program-summary?source=dreams", { token }),
            400,
            "invalid_input"
          )
          expectError(
            yield* call("GET", "/api/analytics/program-summary?from=someday", { token }),
            400,
            "invalid_input"
          )
          expectError(
            yield* call("GET", "/api/analytics/program-summary?account_id=x", { token }),
            400,
            "invalid_input"
          )
          const reversed = "from=2025-02-01T00:00:00Z&to=2025-01-01T00:00:00Z"
          expectError(yield* call("GET", `/api/analytics/program-summary?${reversed}`, { token }), 400, "invalid_input")
          expectError(yield* call("GET", "/api/analytics/program-summary"), 401, "unauthorized")
        }))
    })
  })
}
