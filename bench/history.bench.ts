// `GET /api/programs/backtest/history`'s read: a page of 103 completed backtests (each with 300
// trades, 600 fills and a 1,000-point equity curve, as a long run stores them) read as history
// reads it now (the entry's columns and the stored summary), against the way it read them before
// (every column, each result decoded) as the baseline in the same run, on PGlite and (with
// BENCH_DATABASE_URL or TEST_DATABASE_URL) PostgreSQL. CPU is this process's (PGlite runs in it).
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { DatabaseLive, PlatformConfig, platformOptions, type StorageConfig } from "@trading-platform/core"
import { Effect, Layer, Option, Redacted, Schema } from "effect"
import type { BacktestOutcome } from "../packages/core/src/backtests/Backtest.js"
import { BacktestRow, BacktestsRepo } from "../packages/core/src/backtests/BacktestsRepo.js"
import type { UserId } from "../packages/core/src/users/User.js"
import { withFreshDatabase } from "./FreshDatabase.js"

const backtests = 103
const rounds = 15
const start = Date.parse("2024-01-01T00:00:00Z")

const outcome = (seed: number): BacktestOutcome => {
  const trades = Array.from({ length: 300 }, (_, i) => ({
    symbol: "BTC",
    side: i % 2 === 0 ? "long" as const : "short" as const,
    size: 0.1 + (i % 7) / 100,
    entry_time: start + i * 3_600_000,
    entry_price: 60_000 + Math.sin(i + seed) * 1000,
    exit_time: start + (i + 1) * 3_600_000,
    exit_price: 60_000 + Math.cos(i + seed) * 1000,
    fee: 1.25,
    funding: -0.5,
    pnl: Math.sin(i * 7 + seed) * 50,
    exit_reason: "signal" as const
  }))
  const metrics = {
    total_pnl: 123.45,
    total_pnl_percent: 1.23,
    total_trades: trades.length,
    win_rate: trades.filter((t) => t.pnl > 0).length / trades.length,
    max_drawdown_percent: 4.5,
    sharpe: 1.1,
    profit_factor: 1.3,
    sortino: 1.4,
    calmar: 0.8,
    exposure_percent: 55,
    average_trade_pnl: 0.41,
    longest_drawdown_bars: 120,
    buy_and_hold_percent: 12.5,
    total_fees: 375,
    total_funding: -150
  }
  return {
    metrics,
    per_symbol: [],
    final_balance: 10_123.45,
    equity_curve: Array.from({ length: 1000 }, (_, i) => ({ time: start + i * 3_600_000, equity: 10_000 + i / 7 })),
    trades,
    fills: trades.flatMap((t) => [
      {
        symbol: "BTC",
        time: t.entry_time,
        side: "buy" as const,
        quantity: t.size,
        price: t.entry_price,
        fee: 0.6,
        reason: "signal" as const
      },
      {
        symbol: "BTC",
        time: t.exit_time,
        side: "sell" as const,
        quantity: t.size,
        price: t.exit_price,
        fee: 0.6,
        reason: "signal" as const
      }
    ]),
    warmed_up_bars: 0
  }
}

const measure = (name: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* BacktestsRepo
    const [user] = yield* sql<{ id: UserId }>`
      INSERT INTO users (email, username, password_hash, created_at, updated_at)
      VALUES ('history@example.com', 'history', 'x', now(), now()) RETURNING id`
    const owner = user!.id
    // Queued, claimed and completed as a worker does, so the summary columns are written the same way.
    for (let i = 0; i < backtests; i++) {
      yield* sql`
        INSERT INTO backtests (user_id, symbol, symbols, exchange, timeframe, timeframes, start_at, end_at,
          initial_balance, fee_rate, maker_fee_rate, slippage, leverage, code, status, created_at)
        VALUES (${owner}, 'BTC', '["BTC"]', 'venue1', '1h', '[]', now(), now(), 10000, 0.0005, 0.0002, 0, 1,
          ${"// a program\n".repeat(200)}, 'queued', now())`
      const run = Option.getOrThrow(
        yield* repo.jobs.claim({ now: new Date(), leaseUntil: new Date(Date.now() + 60_000), worker: "bench" })
      )
      yield* repo.jobs.complete(run, outcome(i), new Date())
    }
    const query = { user_id: owner, limit: backtests, offset: 0 }
    // The read before: every column, each result decoded.
    const before = SqlSchema.findAll({
      Request: Schema.Void,
      Result: BacktestRow,
      execute: () =>
        sql`SELECT * FROM backtests WHERE user_id = ${owner} ORDER BY created_at DESC, id DESC LIMIT ${backtests}`
    })
    const ways = {
      before: Effect.map(before(undefined), (rows) => rows.map((r) => r.result?.metrics.win_rate).length),
      now: Effect.map(repo.history(query), (rows) => rows.map((r) => r.total_trades).length)
    }
    const samples = {
      before: [] as Array<{ cpu: number; wall: number }>,
      now: [] as Array<{ cpu: number; wall: number }>
    }
    for (let round = 0; round < rounds + 2; round++) {
      for (const way of ["before", "now"] as const) {
        const cpu = process.cpuUsage()
        const wall = performance.now()
        const count = yield* ways[way]
        if (count !== backtests) throw new Error(`${way} read ${count} backtests`)
        const used = process.cpuUsage(cpu)
        // The first two rounds warm up.
        if (round >= 2) samples[way].push({ cpu: (used.user + used.system) / 1000, wall: performance.now() - wall })
      }
    }
    const median = (values: Array<number>) => values.sort((a, b) => a - b)[values.length >> 1]!
    const of = (way: "before" | "now") => ({
      cpu: median(samples[way].map((s) => s.cpu)),
      wall: median(samples[way].map((s) => s.wall))
    })
    const [b, n] = [of("before"), of("now")]
    console.log(
      `| ${name} | ${b.cpu.toFixed(1)} | ${b.wall.toFixed(1)} | ${n.cpu.toFixed(1)} | ${n.wall.toFixed(1)} | ${
        (b.cpu / n.cpu).toFixed(0)
      }x | ${(b.wall / n.wall).toFixed(0)}x |`
    )
  })

const on = (name: string, storage: StorageConfig) =>
  Effect.runPromise(
    measure(name).pipe(
      Effect.provide(
        BacktestsRepo.Default.pipe(
          Layer.provideMerge(DatabaseLive),
          Layer.provideMerge(PlatformConfig.layer(platformOptions({ storage })))
        )
      )
    )
  )

export const run = async () => {
  console.log(
    `History of ${backtests} completed backtests in one page, median of ${rounds} reads each way, alternating.\n`
  )
  console.log(
    "| storage | before: CPU ms | before: ms | now: CPU ms | now: ms | CPU, before over now | time, before over now |"
  )
  console.log("|---|---:|---:|---:|---:|---:|---:|")
  await on("PGlite", { kind: "pglite", dataDir: "memory://" })
  const url = process.env["BENCH_DATABASE_URL"] ?? process.env["TEST_DATABASE_URL"]
  if (url === undefined) console.log("\nPostgreSQL: skipped (set BENCH_DATABASE_URL or TEST_DATABASE_URL)")
  else await withFreshDatabase(url, (fresh) => on("PostgreSQL", { kind: "postgres", url: Redacted.make(fresh) }))
}
