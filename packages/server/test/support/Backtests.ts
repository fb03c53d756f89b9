import { expect } from "@effect/vitest"
import type { BacktestJobOptions, PlatformOptions } from "@trading-platform/core"
import { backtestThreadCounts, type TestStorage } from "@trading-platform/core/testing"
import { Duration, Effect, Layer, TestClock } from "effect"
import { call, type Reply, TestServer } from "./TestServer.js"

/** Trades every tenth bar: buys half the balance when flat, closes when in a position. */
export const tradingProgram = `let n = 0
export function decide(data) {
  n++
  if (n % 10 !== 0) return { operation: "hold" }
  return data.position ? { operation: "close" } : { operation: "buy", target_portion_of_balance: 0.5 }
}
`

/** Throws at its sixth bar. */
export const throwingProgram = `let n = 0
export function decide(data) {
  if (++n > 5) throw new Error("boom at bar " + n)
  return { operation: "hold" }
}
`

/**
 * Spins forever in calls QuickJS cannot interrupt: converting the largest BigInt to decimal is
 * one operation of seconds, which no CPU-budget check sees.
 */
export const stuckProgram = `export function decide(data) {
  for (;;) (2n ** 1000000n - 1n).toString()
}
`

/** The simulated market needs closed candles: backtest suites run at this instant of the test clock. */
export const marketNow = Date.parse("2025-06-01T00:00:00Z")

/**
 * The test server with backtest workers, its test clock set to `marketNow` before anything starts
 * (moving the clock later would step through every poll of the idle workers).
 */
export const BacktestServer = (
  storage: TestStorage,
  backtests: Partial<BacktestJobOptions> = {},
  config: Partial<PlatformOptions> = {}
) =>
  TestServer({
    storage,
    config: {
      ...config,
      backtests: {
        concurrency: 2,
        pollInterval: Duration.seconds(1),
        lease: Duration.seconds(30),
        maxAttempts: 3,
        ...backtests
      }
    }
  }).pipe(Layer.provide(Layer.effectDiscard(TestClock.setTime(marketNow))))

/** Two weeks of hourly bars (336) of BTC on venue1. */
export const shortRun = { symbol: "BTC", timeframe: "1h", start: "2025-01-01T00:00:00Z", end: "2025-01-15T00:00:00Z" }

const realPause = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 25)))

/**
 * Polls `GET /api/programs/backtest/{id}` (on the real clock: workers run in real time) until the
 * backtest satisfies `done`, or fails the test at the deadline.
 */
export const waitForBacktest = (token: string, id: number, done: (body: any) => boolean, deadlineMs = 60_000) =>
  Effect.gen(function*() {
    const deadline = Date.now() + deadlineMs
    for (;;) {
      const reply: Reply = yield* call("GET", `/api/programs/backtest/${id}`, { token })
      expect(reply.status).toBe(200)
      if (done(reply.body)) return reply.body
      if (Date.now() > deadline) {
        return yield* Effect.die(new Error(`backtest ${id} still ${reply.body.status} at the deadline`))
      }
      yield* realPause
    }
  })

export const isFinished = (body: any) => ["completed", "failed", "cancelled"].includes(body.status)

/**
 * Polls (on the real clock) until no backtest thread of this process is running a backtest or
 * dying after one (idle warm threads are kept); fails at the deadline.
 */
export const untilNoBusyBacktestThreads = (deadlineMs = 30_000) =>
  Effect.gen(function*() {
    const deadline = Date.now() + deadlineMs
    while (backtestThreadCounts().busy > 0) {
      if (Date.now() > deadline) {
        return yield* Effect.die(new Error(`${backtestThreadCounts().busy} backtest threads still busy`))
      }
      yield* realPause
    }
  })
