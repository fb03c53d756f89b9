import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Backtests, type BacktestTrade, Programs } from "@trading-platform/core"
import { Effect, Exit, Option } from "effect"
import { BacktestsRepo } from "../../src/backtests/BacktestsRepo.js"
import { newCaller } from "../support/Callers.js"
import { on, startInstance } from "../support/Instances.js"
import { testStorages } from "../support/TestStorage.js"

const run = {
  symbol: "BTC",
  exchange: "venue1",
  timeframe: "1h",
  start: "2025-01-01T00:00:00Z",
  end: "2025-01-08T00:00:00Z",
  initial_balance: 10_000,
  fee_rate: 0.00035,
  slippage: 0.0005,
  leverage: 1
} as const

// A program's source can be 200,000 characters; the job keeps a copy that only its thread reads.
const code = `export const decide = () => ({ operation: "hold" })\n${"// padding\n".repeat(5_000)}`

// Numbers whose shortest text is long or in exponent form, to show each trade decodes to the double it was stored as.
const awkward = [0.1 + 0.2, 1e-7, 123456789.12345679, -2.5e-10, 1 / 3, 5e21]
const storedTrade = (i: number) => ({
  symbol: "BTC",
  side: i % 2 === 0 ? "long" : "short",
  size: awkward[i % awkward.length]!,
  entry_time: 1_735_689_600_000 + i * 3_600_000,
  entry_price: 94_000 + i / 7,
  exit_time: 1_735_693_200_000 + i * 3_600_000,
  exit_price: 94_100 - i / 3,
  fee: awkward[(i + 1) % awkward.length]!,
  // Trades stored before funding was measured have none: they read as 0.
  ...(i % 3 === 0 ? {} : { funding: -i / 11 }),
  pnl: awkward[(i + 2) % awkward.length]! - i,
  exit_reason: "signal"
})
const storedTrades = Array.from({ length: 23 }, (_, i) => storedTrade(i))
const expected: ReadonlyArray<BacktestTrade> = storedTrades.map((t) => ({ funding: 0, ...t }) as BacktestTrade)

// A result as an earlier version stored it: no per-symbol shares, fills or warm-up count.
const storedResult = JSON.stringify({
  metrics: {
    total_pnl: 12.5,
    total_pnl_percent: 0.125,
    total_trades: storedTrades.length,
    win_rate: 0.5,
    max_drawdown_percent: 3,
    sharpe: 1.2,
    profit_factor: 1.1
  },
  final_balance: 10_012.5,
  equity_curve: [{ time: 1_735_689_600_000, equity: 10_000 }],
  trades: storedTrades
})

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`a backtest's reads over ${storage.name}`, () => {
    it.scopedLive(
      "a trades page is the stored trades' slice, decoded to the same doubles, with their total; none before a result",
      () =>
        Effect.gen(function*() {
          const instance = yield* startInstance(yield* storage.storage, yield* Effect.scope, { concurrency: 0 })
          yield* on(
            instance,
            Effect.gen(function*() {
              const backtests = yield* Backtests
              const sql = yield* SqlClient.SqlClient
              const caller = yield* newCaller("trades")
              const program = yield* Effect.flatMap(Programs, (programs) =>
                programs.create(caller, { name: "Holds", code }))
              const { id } = yield* backtests.submit(caller, program.id, run)

              expect(yield* backtests.trades(caller, id, {})).toMatchObject({ trades: [], total: 0 })

              yield* sql`UPDATE backtests SET status = 'completed', result = ${storedResult} WHERE id = ${id}`
              const page = (limit: number, offset: number) =>
                Effect.map(backtests.trades(caller, id, { limit, offset }), ({ total, trades }) => ({ total, trades }))
              expect(yield* page(5, 0)).toEqual({ total: 23, trades: expected.slice(0, 5) })
              expect(yield* page(7, 9)).toEqual({ total: 23, trades: expected.slice(9, 16) })
              expect(yield* page(50, 20)).toEqual({ total: 23, trades: expected.slice(20) })
              expect(yield* page(10, 23)).toEqual({ total: 23, trades: [] })
              // The same trades as the whole backtest's, which decodes the whole result.
              const whole = yield* backtests.get(caller, id)
              expect(whole.trades).toEqual(expected)
              expect((yield* page(23, 0)).trades).toEqual(whole.trades)

              const other = yield* newCaller("trades_other")
              const forbidden = yield* Effect.exit(backtests.trades(other, id, {}))
              expect(Exit.isFailure(forbidden) && JSON.stringify(forbidden.cause)).toContain("Forbidden")
              const unknown = yield* Effect.exit(backtests.trades(caller, (id + 100_000) as typeof id, {}))
              expect(Exit.isFailure(unknown) && JSON.stringify(unknown.cause)).toContain("NotFound")
            })
          )
        }),
      { timeout: 60_000 }
    )

    it.scopedLive(
      "a backtest's reads leave out the job's code; a cancel checks the owner alone",
      () =>
        Effect.gen(function*() {
          const instance = yield* startInstance(yield* storage.storage, yield* Effect.scope, { concurrency: 0 })
          yield* on(
            instance,
            Effect.gen(function*() {
              const backtests = yield* Backtests
              const repo = yield* BacktestsRepo
              const caller = yield* newCaller("reads")
              const program = yield* Effect.flatMap(
                Programs,
                (programs) => programs.create(caller, { name: "Holds", code })
              )
              const { id } = yield* backtests.submit(caller, program.id, run)

              const row = Option.getOrThrow(yield* repo.findById(id))
              expect(row).toMatchObject({ id, user_id: caller.id, status: "queued" })
              expect("code" in row).toBe(false)
              expect(Option.getOrThrow(yield* repo.owner(id))).toEqual({ user_id: caller.id })
              expect(yield* repo.owner((id + 100_000) as typeof id)).toEqual(Option.none())

              const other = yield* newCaller("reads_other")
              const forbidden = yield* Effect.exit(backtests.cancel(other, id))
              expect(Exit.isFailure(forbidden) && JSON.stringify(forbidden.cause)).toContain("Forbidden")
              const unknown = yield* Effect.exit(backtests.cancel(caller, (id + 100_000) as typeof id))
              expect(Exit.isFailure(unknown) && JSON.stringify(unknown.cause)).toContain("NotFound")
              expect((yield* backtests.get(caller, id)).status).toBe("queued")
              expect((yield* backtests.cancel(caller, id)).status).toBe("cancelled")
            })
          )
        }),
      { timeout: 60_000 }
    )
  })
}
