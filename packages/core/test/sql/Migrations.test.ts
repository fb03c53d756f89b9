import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { DatabaseLive, migrate, migrations, PgliteClient, PlatformConfig } from "@trading-platform/core"
import { Effect, Layer } from "effect"
import { testOptions, testStorages } from "../support/TestStorage.js"

/** A database an earlier release left: migrated up to the migration `name`, with one user in it. */
const migratedBefore = (name: string) =>
  Effect.gen(function*() {
    const all = yield* migrations
    const at = all.findIndex(([, n]) => n === name)
    expect(at).toBeGreaterThan(0)
    yield* Migrator.make({})({ loader: Effect.succeed(all.slice(0, at)), table: "trading_platform_migrations" })
    const sql = yield* SqlClient.SqlClient
    const now = new Date(0)
    const [user] = yield* sql<{ id: number }>`
      INSERT INTO users (email, username, password_hash, created_at, updated_at)
      VALUES ('a@example.com', 'a', 'x', ${now}, ${now}) RETURNING id`
    return { sql, now, user: user! }
  })

describe("migrate", () => {
  it.effect("runs what a schema behind the code lacks, then nothing once it is current", () =>
    Effect.gen(function*() {
      const all = yield* migrations
      const [id, name] = all.at(-1)!
      // A database an earlier release migrated: every migration but the last.
      yield* Migrator.make({})({ loader: Effect.succeed(all.slice(0, -1)), table: "trading_platform_migrations" })
      expect(yield* migrate).toEqual([[id, name]])
      expect(yield* migrate).toEqual([])
    }).pipe(Effect.provide(PgliteClient.layer(undefined))), { timeout: 60_000 })

  it.effect(
    "0025 names the one symbol of earlier backtests in their symbols and in their stored trades and fills",
    () =>
      Effect.gen(function*() {
        const { sql, now, user } = yield* migratedBefore("backtest_portfolios")
        const trade = {
          side: "long",
          size: 0.1,
          entry_time: 1,
          entry_price: 100.25,
          exit_time: 2,
          exit_price: 1e-7,
          fee: 0.000123,
          funding: 0,
          pnl: -10.02,
          exit_reason: "signal"
        }
        const fill = { time: 1, side: "buy", quantity: 0.1, price: 100.25, fee: 0.000123, reason: "signal" }
        const stored = {
          metrics: {},
          final_balance: 1,
          equity_curve: [],
          trades: [trade, { ...trade, size: 0.2 }],
          fills: [fill]
        }
        yield* sql`
        INSERT INTO backtests (user_id, symbol, exchange, timeframe, start_at, end_at, initial_balance, fee_rate,
          maker_fee_rate, slippage, leverage, code, status, result, created_at)
        VALUES (${user.id}, 'ETH', 'venue1', '1h', ${now}, ${now}, 1, 0, 0, 0, 1, '', 'completed',
          ${JSON.stringify(stored)}, ${now}), (${user.id}, 'BTC', 'venue1', '1h', ${now}, ${now}, 1, 0, 0, 0, 1, '',
          'queued', NULL, ${now})`
        yield* migrate
        const rows = yield* sql<{ symbols: string; timeframes: string; result: string | null }>`
        SELECT symbols, timeframes, result FROM backtests ORDER BY id`
        expect(rows.map((r) => [JSON.parse(r.symbols), JSON.parse(r.timeframes)])).toEqual([[["ETH"], []], [
          ["BTC"],
          []
        ]])
        const migrated = JSON.parse(rows[0]!.result!)
        // The same numbers, in the same order, each naming the symbol.
        expect(migrated.trades).toEqual([{ ...trade, symbol: "ETH" }, { ...trade, size: 0.2, symbol: "ETH" }])
        expect(migrated.fills).toEqual([{ ...fill, symbol: "ETH" }])
        expect(rows[1]!.result).toBeNull()
      }).pipe(Effect.provide(PgliteClient.layer(undefined))),
    { timeout: 60_000 }
  )

  it.effect("0039 copies each finished trial's metrics out of its stored result", () =>
    Effect.gen(function*() {
      const { sql, now, user } = yield* migratedBefore("trial_metrics")
      const [optimization] = yield* sql<{ id: number }>`
        INSERT INTO optimizations (user_id, code, request, space, params, trials_total, status, created_at)
        VALUES (${user.id}, '', '{}', '[]', '{}', 2, 'running', ${now}) RETURNING id`
      const metrics = { total_pnl: 1.5, total_pnl_percent: 0.015, total_trades: 2, sharpe: null }
      const result = { outcome: { metrics, trades: [{ pnl: 1 }, { pnl: 0.5 }], equity_curve: [] }, objective: 1 }
      for (const [trial, stored] of [[0, JSON.stringify(result)], [1, null]] as const) {
        yield* sql`
          INSERT INTO optimization_trials (user_id, optimization_id, trial, fold, role, params, start_at, end_at,
            status, result, created_at)
          VALUES (${user.id}, ${optimization!.id}, ${trial}, 0, 'search', '{}', ${now}, ${now},
            ${stored === null ? "running" : "completed"}, ${stored}, ${now})`
      }
      yield* migrate
      const rows = yield* sql<{ metrics: string | null }>`SELECT metrics FROM optimization_trials ORDER BY trial`
      expect(JSON.parse(rows[0]!.metrics!)).toEqual(metrics)
      expect(rows[1]!.metrics).toBeNull()
    }).pipe(Effect.provide(PgliteClient.layer(undefined))), { timeout: 60_000 })

  it.effect(
    "0040 indexes each job table's unfinished jobs by owner, which a claim reads whatever the planner's estimates",
    () =>
      Effect.gen(function*() {
        const { sql } = yield* migratedBefore("claimable_by_owner")
        yield* migrate
        const tables = [
          "backtests",
          "automation_runs",
          "ai_insights",
          "candle_syncs",
          "ai_decision_rounds",
          "ai_backtests",
          "optimizations",
          "optimization_trials"
        ]
        const indexes = yield* sql<{ tablename: string; indexdef: string }>`
        SELECT tablename, indexdef FROM pg_indexes WHERE indexname = ANY(${tables.map((t) => `${t}_claimable`)})`
        expect(indexes.map((i) => i.tablename).sort()).toEqual([...tables].sort())
        for (const { indexdef } of indexes) {
          expect(indexdef).toMatch(
            /\(user_id, id\) WHERE \(status = ANY \(ARRAY\['queued'::text, 'running'::text\]\)\)$/
          )
        }
      }).pipe(Effect.provide(PgliteClient.layer(undefined))),
    { timeout: 60_000 }
  )

  const postgres = testStorages[1]!
  it.scoped.skipIf(!postgres.available)(
    "replicas starting together on one new PostgreSQL database migrate it once, one after the other",
    () =>
      Effect.gen(function*() {
        const storage = yield* postgres.storage
        const scope = yield* Effect.scope
        // Each replica is its own pool, as a process of its own would be; all start at once.
        const replica = Layer.buildWithScope(
          DatabaseLive.pipe(Layer.provide(PlatformConfig.layer(testOptions(storage)))),
          scope
        )
        const started = yield* Effect.all(Array.from({ length: 4 }, () => replica), { concurrency: "unbounded" })
        const sql = (started[0]!).unsafeMap.get(SqlClient.SqlClient.key) as SqlClient.SqlClient
        const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM trading_platform_migrations`
        expect(rows[0]!.n).toBe((yield* migrations).length)
      }),
    { timeout: 120_000 }
  )
})
