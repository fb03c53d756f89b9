import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Stream } from "effect"
import type { BacktestSettings } from "../../src/backtests/Backtest.js"
import { BacktestEngine, runBacktest } from "../../src/backtests/BacktestEngine.js"
import { computeMetrics } from "../../src/backtests/BacktestMetrics.js"
import { type Decide, decideEachBar } from "../../src/sandbox/Decider.js"
import { type AccountView, type Decision, ProgramRunError } from "../../src/sandbox/Decision.js"
import { type Candle } from "../../src/venues/Venue.js"

const settings = (overrides: Partial<BacktestSettings> = {}): BacktestSettings => ({
  initialBalance: 10_000,
  feeRate: 0,
  slippage: 0,
  leverage: 1,
  barsPerYear: 1,
  ...overrides
})

let clock = 0
/** A bar at `close`, its range widened by `low`/`high`/`open` when given. */
const bar = (close: number, range: Partial<Candle> = {}): Candle => ({
  time: ++clock * 60_000,
  open: close,
  high: Math.max(close, range.open ?? close),
  low: Math.min(close, range.open ?? close),
  close,
  volume: 1,
  ...range
})

/** Runs the bars with one scripted decision per bar (hold when absent) and records what decide saw. */
const run = (s: BacktestSettings, script: ReadonlyArray<readonly [Candle, Decision?]>) => {
  const engine = new BacktestEngine(s)
  const seen: Array<AccountView> = []
  const decisions = new Map(script.map(([candle, decision]) => [candle, decision]))
  engine.run(
    script.map(([candle]) => candle),
    decideEachBar((candle, account) => {
      seen.push(account)
      return decisions.get(candle) ?? { operation: "hold" }
    })
  )
  return { engine, seen }
}

describe("BacktestEngine", () => {
  it("an entry spends the portion on margin plus fee, and the exit pays the fee on its notional", () => {
    // spend 5005 = margin 5000 + fee 5000 * 0.001; size 5000 / 100 = 50.
    const { engine, seen } = run(settings({ feeRate: 0.001 }), [
      [bar(100), { operation: "buy", target_portion_of_balance: 0.5005 }],
      [bar(110), { operation: "close" }],
      [bar(120)]
    ])
    expect(seen[1]).toEqual({
      position: { side: "long", size: 50, entry_price: 100, leverage: 1 },
      balance: 9995,
      equity: 10495
    })
    const result = engine.finish()
    // 9995 + 50 * 10 - 50 * 110 * 0.001
    expect(result.final_balance).toBeCloseTo(10489.5, 9)
    expect(result.trades).toEqual([
      expect.objectContaining({ side: "long", size: 50, entry_price: 100, exit_price: 110, exit_reason: "signal" })
    ])
    expect(result.trades[0]!.fee).toBeCloseTo(10.5, 9)
    expect(result.trades[0]!.pnl).toBeCloseTo(489.5, 9)
    expect(result.metrics.total_pnl).toBeCloseTo(489.5, 9)
  })

  it("market fills move the price against the taker by the slippage", () => {
    const { engine } = run(settings({ slippage: 0.01 }), [[bar(100), { operation: "buy" }], [bar(100), {
      operation: "close"
    }]])
    const [trade] = engine.finish().trades
    expect(trade!.entry_price).toBeCloseTo(101, 9)
    expect(trade!.exit_price).toBeCloseTo(99, 9)
    expect(trade!.pnl).toBeCloseTo((10_000 / 101) * -2, 9)
  })

  it("leverage multiplies the size on the same margin, and equity marks the position at each close", () => {
    const { engine, seen } = run(settings(), [[bar(100), { operation: "buy", leverage: 5 }], [bar(102)], [bar(99)]])
    expect(seen[1]!.position).toEqual({ side: "long", size: 500, entry_price: 100, leverage: 5 })
    expect(seen[1]!.equity).toBe(11_000)
    const result = engine.finish()
    expect(result.equity_curve.map((p) => p.equity)).toEqual([10_000, 11_000, 9_500])
    expect(result.trades[0]!.exit_reason).toBe("end_of_data")
  })

  it("buying while long averages the entry price; the free balance funds the addition", () => {
    const { seen } = run(settings(), [
      [bar(100), { operation: "buy", target_portion_of_balance: 0.5 }],
      [bar(125), { operation: "buy" }],
      [bar(125)]
    ])
    // 50 at 100, then 5000 more margin at 125 = 40: 90 units for 10000.
    expect(seen[2]!.position).toEqual({ side: "long", size: 90, entry_price: 10_000 / 90, leverage: 1 })
    expect(seen[2]!.equity).toBeCloseTo(11_250, 9)
  })

  it("selling while long closes the long and opens a short with the whole free balance", () => {
    const { engine, seen } = run(settings(), [[bar(100), { operation: "buy" }], [bar(110), { operation: "sell" }], [
      bar(110)
    ]])
    expect(seen[2]!.position).toEqual({ side: "short", size: 100, entry_price: 110, leverage: 1 })
    expect(seen[2]!.balance).toBe(11_000)
    expect(engine.finish().trades.map((t) => [t.side, t.exit_reason, t.pnl + 0])).toEqual([["long", "reversal", 1000], [
      "short",
      "end_of_data",
      0
    ]])
  })

  it("a take-profit fills at its price when the bar's high reaches it", () => {
    const { engine } = run(settings(), [
      [bar(100), { operation: "buy", take_profit_price: 110, stop_loss_price: 95 }],
      [bar(105, { open: 101, high: 112, low: 99 })]
    ])
    expect(engine.finish().trades).toEqual([
      expect.objectContaining({ exit_price: 110, pnl: 1000, exit_reason: "take_profit" })
    ])
  })

  it("when both the stop and the take-profit lie inside one bar, the stop is assumed first", () => {
    const { engine } = run(settings(), [
      [bar(100), { operation: "buy", take_profit_price: 110, stop_loss_price: 95 }],
      [bar(100, { high: 112, low: 94 })]
    ])
    expect(engine.finish().trades).toEqual([
      expect.objectContaining({ exit_price: 95, pnl: -500, exit_reason: "stop_loss" })
    ])
  })

  it("a gap through the stop fills at the open, with slippage; a gap through the take-profit fills at the open", () => {
    const stopped = run(settings({ slippage: 0.01 }), [
      [bar(100), { operation: "buy", stop_loss_price: 95 }],
      [bar(92, { open: 90 })]
    ]).engine.finish().trades[0]!
    expect(stopped.exit_price).toBeCloseTo(90 * 0.99, 9)
    const taken = run(settings(), [[bar(100), { operation: "sell", take_profit_price: 90 }], [bar(86, { open: 85 })]])
      .engine.finish()
    expect(taken.trades[0]).toMatchObject({ side: "short", exit_price: 85, pnl: 1500, exit_reason: "take_profit" })
  })

  it("a long is liquidated at entry minus margin over size, losing exactly its margin", () => {
    // 5x: 500 units at 100 on 10000 margin; liquidation at 100 - 10000 / 500 = 80.
    const { engine } = run(settings(), [[bar(100), { operation: "buy", leverage: 5 }], [bar(85, { low: 79 })], [
      bar(85)
    ]])
    const result = engine.finish()
    expect(result.trades).toEqual([
      expect.objectContaining({ exit_price: 80, pnl: -10_000, fee: 0, exit_reason: "liquidation" })
    ])
    expect(result.final_balance).toBe(0)
    expect(result.metrics.max_drawdown_percent).toBe(100)
  })

  it("a short is liquidated when the high reaches entry plus margin over size (10x on 5000: at 110)", () => {
    const { engine } = run(settings(), [
      [bar(100), { operation: "sell", leverage: 10, target_portion_of_balance: 0.5 }],
      [bar(104, { high: 111 })]
    ])
    expect(engine.finish().trades[0]).toMatchObject({
      side: "short",
      exit_price: 110,
      pnl: -5000,
      exit_reason: "liquidation"
    })
  })

  it("a stop above the liquidation price exits as a stop, not a liquidation", () => {
    const { engine } = run(settings(), [[bar(100), { operation: "buy", leverage: 5, stop_loss_price: 85 }], [
      bar(90, { low: 79 })
    ]])
    expect(engine.finish().trades[0]).toMatchObject({ exit_price: 85, pnl: -7500, exit_reason: "stop_loss" })
  })

  it("runBacktest drives the engine from a stream and fails with the program's typed error", () =>
    Effect.gen(function*() {
      const first = bar(100)
      const candles = Stream.fromIterable([first, bar(101), bar(102)])
      const flat: Decide = () => ({ operation: "hold" })
      const result = yield* runBacktest(settings(), candles, decideEachBar(flat))
      expect(result.equity_curve).toHaveLength(3)
      const failing: Decide = (candle) => {
        throw new ProgramRunError({ reason: "threw", message: "boom", time: candle.time })
      }
      const exit = yield* Effect.exit(runBacktest(settings(), candles, decideEachBar(failing)))
      expect(exit).toEqual(Exit.fail(new ProgramRunError({ reason: "threw", message: "boom", time: first.time })))
    }).pipe(Effect.runPromise))
})

describe("computeMetrics", () => {
  const trade = (pnl: number) => ({ pnl }) as never

  it("derives pnl, win rate, profit factor, drawdown and Sharpe from the curve and the trades", () => {
    const metrics = computeMetrics(settings(), [11_000, 9_900, 12_000], [trade(1000), trade(-500), trade(1500)])
    expect(metrics.total_pnl).toBe(2000)
    expect(metrics.total_pnl_percent).toBe(20)
    expect(metrics.total_trades).toBe(3)
    expect(metrics.win_rate).toBeCloseTo(2 / 3, 12)
    expect(metrics.profit_factor).toBe(5)
    expect(metrics.max_drawdown_percent).toBeCloseTo(10, 9)
    // Returns 0.1, -0.1, 0.2121…: mean 0.070707 over sample deviation 0.158114.
    expect(metrics.sharpe).toBeCloseTo(0.44721, 4)
  })

  it("answers zeros and a null profit factor without trades or variation", () => {
    expect(computeMetrics(settings(), [10_000, 10_000], [])).toEqual({
      total_pnl: 0,
      total_pnl_percent: 0,
      total_trades: 0,
      win_rate: 0,
      max_drawdown_percent: 0,
      sharpe: 0,
      profit_factor: null
    })
  })
})
