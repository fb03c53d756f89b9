import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Stream } from "effect"
import type { BacktestSettings } from "../../src/backtests/Backtest.js"
import { BacktestEngine, fundingOf, oneSymbol, runBacktest } from "../../src/backtests/BacktestEngine.js"
import { computeMetrics } from "../../src/backtests/BacktestMetrics.js"
import { type AccountState, type Bars, type Decide, decideEachBar, type Decider } from "../../src/sandbox/Decider.js"
import { type AccountView, type Decision, ProgramRunError } from "../../src/sandbox/Decision.js"
import { unlistedRules } from "../../src/trading/Fills.js"
import { type Candle } from "../../src/venues/Venue.js"

/** No maintenance margin and no liquidation fee: a position is liquidated when its loss reaches its margin. */
const bare = { tiers: [{ notional_floor: 0, max_leverage: 125, maintenance_rate: 0 }], liquidation_fee_rate: 0 }

/** Fills at the close decided on, one fee for every fill: the simplest terms, which the older cases measure against. */
const settings = (overrides: Partial<BacktestSettings> & { feeRate?: number } = {}): BacktestSettings => {
  const { feeRate = 0, ...rest } = overrides
  return {
    initialBalance: 10_000,
    takerFeeRate: feeRate,
    makerFeeRate: feeRate,
    slippage: 0,
    slippageModel: "fixed",
    rules: unlistedRules("BTC", bare),
    leverage: 1,
    fillTiming: "close",
    marginMode: "isolated",
    barMillis: 60_000,
    barsPerYear: 1,
    ...rest
  }
}

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
    [script.map(([candle]) => candle)],
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

  it("next_open: a decision at a close fills at the next bar's open; one at the last bar never fills", () => {
    const { engine } = run(settings({ fillTiming: "next_open" }), [
      [bar(100), { operation: "buy" }],
      [bar(120, { open: 110 }), { operation: "close" }],
      [bar(130, { open: 125 }), { operation: "buy" }]
    ])
    const result = engine.finish()
    // Bought at 110 with 10000 (size 90.909…), sold at 125; the last buy had no next open.
    expect(result.trades).toHaveLength(1)
    expect(result.trades[0]).toMatchObject({ entry_price: 110, exit_price: 125, exit_reason: "signal" })
    expect(result.final_balance).toBeCloseTo(10_000 * 125 / 110, 7)
  })

  it("a liquidation comes at the venue's maintenance margin and pays its fee out of what is left", () => {
    // 10x long of 10000 at 100: size 1000, margin 10000. Maintenance 0.5% of notional, fee 1%.
    const margin = {
      tiers: [{ notional_floor: 0, max_leverage: 20, maintenance_rate: 0.005 }],
      liquidation_fee_rate: 0.01
    }
    const { engine } = run(settings({ rules: unlistedRules("BTC", margin), initialBalance: 10_000 }), [
      [bar(100), { operation: "buy", leverage: 10 }],
      [bar(95, { low: 90.4 })],
      [bar(89, { low: 80 })]
    ])
    const result = engine.finish()
    // 10000 + 1000 (P - 100) = 0.005 * 1000 P  =>  P = 90000 / 995 = 90.452…: the first bar's low stays above.
    const price = 90_000 / 995
    expect(result.trades).toHaveLength(1)
    expect(result.trades[0]!.exit_reason).toBe("liquidation")
    expect(result.trades[0]!.exit_price).toBeCloseTo(price, 9)
    // What was left (the maintenance margin, 0.5% of notional) is less than 1% of it: the fee takes all of it.
    expect(result.trades[0]!.fee).toBeCloseTo(0.005 * 1000 * price, 6)
    expect(result.final_balance).toBeCloseTo(0, 6)
  })

  it("target_portion_of_position closes part of the position; reduce_only never opens or adds", () => {
    const { engine } = run(settings(), [
      [bar(100), { operation: "buy" }],
      [bar(110), { operation: "close", target_portion_of_position: 0.25 }],
      [bar(120), { operation: "buy", reduce_only: true }],
      [bar(130), { operation: "sell", reduce_only: true, target_portion_of_position: 0.5 }],
      [bar(140), { operation: "sell", reduce_only: true }],
      [bar(150), { operation: "sell", reduce_only: true }]
    ])
    const result = engine.finish()
    // 100 coins: 25 closed at 110, nothing at 120 (it would add), half of 75 at 130, the rest at 140, nothing at 150.
    expect(result.trades.map((t) => [t.size, t.exit_price, t.exit_reason])).toEqual([
      [25, 110, "signal"],
      [37.5, 130, "signal"],
      [37.5, 140, "signal"]
    ])
    expect(result.fills.map((f) => f.side)).toEqual(["buy", "sell", "sell", "sell"])
    expect(result.final_balance).toBeCloseTo(10_000 + 25 * 10 + 37.5 * 30 + 37.5 * 40, 6)
  })

  it("a trailing stop follows the best price from the bar after it and exits as a stop loss", () => {
    const { engine } = run(settings(), [
      [bar(100), { operation: "buy", trailing_stop: 0.1, stop_loss_price: 80 }],
      // The high of 120 lifts the stop to 108 from the next bar on; this bar's low of 105 touched nothing.
      [bar(110, { high: 120, low: 105 })],
      [bar(112, { low: 109 })],
      [bar(109, { low: 107 })]
    ])
    const result = engine.finish()
    expect(result.trades).toHaveLength(1)
    expect(result.trades[0]).toMatchObject({ exit_price: 108, exit_reason: "stop_loss", exit_time: clock * 60_000 })
  })

  it("a limit entry rests until a bar reaches it and fills at its price with the maker fee, or at the open past it", () => {
    const s = settings({ feeRate: 0.001, makerFeeRate: 0.0001, slippage: 0.01 })
    const { engine } = run(s, [
      [bar(100), { operation: "buy", order_type: "limit", entry_price: 95 }],
      [bar(97, { low: 96 })],
      [bar(96, { low: 94 })],
      [bar(99), { operation: "sell", order_type: "limit", entry_price: 105, reduce_only: true }],
      [bar(108, { open: 106 })]
    ])
    const result = engine.finish()
    // Bought at 95 (no slippage) paying 0.01 %: 10000 / (1 + 0.0001) / 95 coins; sold at the open 106 above 105.
    expect(result.fills.map((f) => [f.side, f.price])).toEqual([["buy", 95], ["sell", 106]])
    expect(result.fills[0]!.fee).toBeCloseTo(result.fills[0]!.quantity * 95 * 0.0001, 7)
    expect(result.fills[1]!.fee).toBeCloseTo(result.fills[1]!.quantity * 106 * 0.0001, 7)
  })

  it("a stop entry fills at its level with slippage and the taker fee; ioc never rests; a later decision replaces an entry", () => {
    const s = settings({ feeRate: 0.001, makerFeeRate: 0.0001, slippage: 0.01 })
    const { engine } = run(s, [
      [bar(100), { operation: "buy", order_type: "stop", entry_price: 110, time_in_force: "ioc" }],
      [bar(112, { high: 115 })],
      [bar(100), { operation: "buy", order_type: "stop", entry_price: 120 }],
      [bar(101), { operation: "sell", order_type: "stop", entry_price: 90 }],
      [bar(119, { high: 125, low: 100 })],
      [bar(95, { low: 85 })]
    ])
    const result = engine.finish()
    // The ioc stop was not reached when placed; the buy stop at 120 was replaced by the sell stop at 90.
    expect(result.fills[0]).toMatchObject({ side: "sell", price: 90 * 0.99 })
    expect(result.fills[0]!.fee).toBeCloseTo(result.fills[0]!.quantity * 90 * 0.99 * 0.001, 7)
    expect(result.fills).toHaveLength(2)
  })

  it("cross margin backs a position with the free cash too: it survives a move that liquidates it isolated", () => {
    // 10x long with half the balance: margin 5000, size 500 at 100; 5000 free. No maintenance.
    const script = (): ReadonlyArray<readonly [Candle, Decision?]> => [
      [bar(100), { operation: "buy", target_portion_of_balance: 0.5, leverage: 10 }],
      [bar(95, { low: 89 })],
      [bar(85, { low: 79 })]
    ]
    const isolated = run(settings({ marginMode: "isolated" }), script()).engine.finish()
    // Isolated: liquidated at 100 - 5000 / 500 = 90, losing the margin only.
    expect(isolated.trades[0]).toMatchObject({ exit_reason: "liquidation", exit_price: 90 })
    expect(isolated.final_balance).toBeCloseTo(5000, 6)
    const cross = run(settings({ marginMode: "cross" }), script()).engine.finish()
    // Cross: backed by all 10000, liquidated at 100 - 10000 / 500 = 80, in the third bar, losing everything.
    expect(cross.trades[0]).toMatchObject({ exit_reason: "liquidation", exit_price: 80 })
    expect(cross.final_balance).toBeCloseTo(0, 6)
  })

  it("the bracket of a larger position asks more maintenance: it is liquidated sooner", () => {
    const tiers = [
      { notional_floor: 0, max_leverage: 125, maintenance_rate: 0.004 },
      { notional_floor: 50_000, max_leverage: 100, maintenance_rate: 0.005 },
      { notional_floor: 600_000, max_leverage: 75, maintenance_rate: 0.0065 }
    ]
    const liquidationAt = (initialBalance: number) => {
      const { engine } = run(
        settings({ rules: unlistedRules("BTC", { tiers, liquidation_fee_rate: 0 }), initialBalance }),
        [
          [bar(100), { operation: "buy", leverage: 50 }],
          [bar(99, { low: 1 })]
        ]
      )
      return engine.finish().trades[0]!.exit_price
    }
    // 50x: 2% below entry loses the margin; maintenance puts the liquidation above 98, more so for the bigger position.
    const small = liquidationAt(500)
    const large = liquidationAt(100_000)
    expect(small).toBeGreaterThan(98)
    expect(large).toBeGreaterThan(small)
    // 25000 of notional, all in the first bracket: 500 + 250 (P - 100) = 0.004 · 250 P.
    expect(small).toBeCloseTo(24_500 / 249, 9)
  })

  it("funding: a long pays the rate on its notional at each payment's bar open, shown in its trade and the metrics", () => {
    clock = 0
    const bars = [bar(100), bar(100), bar(110), bar(110), bar(110)]
    const funding = [
      { time: bars[0]!.time, rate: 0.01 },
      { time: bars[2]!.time, rate: 0.01 },
      { time: bars[3]!.time, rate: -0.02 }
    ]
    const s = settings({ fillTiming: "close" })
    const engine = new BacktestEngine(s, [{ rules: s.rules, funding: fundingOf(funding) }])
    engine.run(
      [bars],
      decideEachBar((candle) =>
        candle === bars[0] ? { operation: "buy" } : candle === bars[3] ? { operation: "close" } : { operation: "hold" }
      )
    )
    const result = engine.finish()
    // Bought at bar 0's close (after its payment): size 100. Pays 100·110·1% at bar 2, gets 100·110·2% at bar 3.
    expect(result.trades[0]!.funding).toBeCloseTo(-110 + 220, 9)
    expect(result.trades[0]!.pnl).toBeCloseTo(1000 + 110, 9)
    expect(result.metrics.total_funding).toBeCloseTo(110, 9)
    expect(result.final_balance).toBeCloseTo(11_110, 9)
  })

  it("the volume model slips more for an order that is a larger share of the bar's volume", () => {
    const entry = (volume: number) => {
      const { engine } = run(settings({ slippage: 0.001, slippageModel: "volume" }), [
        [bar(100, { volume }), { operation: "buy" }],
        [bar(100)]
      ])
      return engine.finish().trades[0]!.entry_price
    }
    expect(entry(1e12)).toBeCloseTo(100.1, 3)
    expect(entry(1000)).toBeGreaterThan(entry(100_000))
    // An order near 100 coins against a 1000-coin bar: 0.1% + 0.1 · √(0.1) ≈ 3.26%.
    expect(entry(1000)).toBeGreaterThan(103)
  })

  it("a take profit pays the maker fee, a stop the taker fee", () => {
    const s = settings({ feeRate: 0.001, makerFeeRate: 0.0001 })
    const tp = run(s, [[bar(100), { operation: "buy", take_profit_price: 110 }], [bar(105, { high: 111 })]]).engine
      .finish()
    const entryFee = tp.trades[0]!.size * 100 * 0.001
    expect(tp.trades[0]!.fee).toBeCloseTo(entryFee + tp.trades[0]!.size * 110 * 0.0001, 7)
    const sl = run(s, [[bar(100), { operation: "buy", stop_loss_price: 90 }], [bar(95, { low: 89 })]]).engine.finish()
    expect(sl.trades[0]!.fee).toBeCloseTo(entryFee + sl.trades[0]!.size * 90 * 0.001, 7)
  })

  it("warm-up bars are decided but trade nothing and are not measured; the program's state carries into the run", () =>
    Effect.gen(function*() {
      const warmup = Array.from({ length: 40 }, (_, i) => bar(100 + i))
      const candles = Array.from({ length: 20 }, (_, i) => bar(140 + i))
      // Buys at the first bar it sees (in the warm-up: dropped), then at its 50th (the run's 10th).
      const counting = (): Decide => {
        let seen = 0
        return () => (++seen === 1 || seen === 50
          ? { operation: "buy", target_portion_of_balance: 0.5 }
          : { operation: "hold" })
      }
      const warmed = yield* runBacktest(
        settings(),
        oneSymbol(Stream.fromIterable(candles)),
        decideEachBar(counting()),
        undefined,
        [warmup]
      )
      expect(warmed.warmed_up_bars).toBe(40)
      expect(warmed.equity_curve.map((p) => p.time)).toEqual(candles.map((c) => c.time))
      expect(warmed.fills.map((f) => [f.time, f.reason])).toEqual([
        [candles[9]!.time, "signal"],
        [candles[19]!.time, "end_of_data"]
      ])
      // Without a warm-up the same program buys at the run's first bar and never sees a 50th.
      const cold = yield* runBacktest(settings(), oneSymbol(Stream.fromIterable(candles)), decideEachBar(counting()))
      expect(cold.warmed_up_bars).toBe(0)
      expect(cold.fills[0]!.time).toBe(candles[0]!.time)
    }).pipe(Effect.runPromise))

  it("runBacktest drives the engine from a stream and fails with the program's typed error", () =>
    Effect.gen(function*() {
      const first = bar(100)
      const candles = oneSymbol(Stream.fromIterable([first, bar(101), bar(102)]))
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

/**
 * A program of several symbols in the host: `script(i)` answers bar i's decisions (a hold for each
 * symbol it leaves out), and `seen` records the account it was shown at each bar.
 */
const portfolio = (script: (i: number) => ReadonlyArray<Decision> | undefined) => {
  const seen: Array<AccountState> = []
  let bars: Bars = []
  const decider: Decider = {
    chunk: (next) => {
      bars = next
    },
    decide: (from, account, bands, until = bars[0]!.length) => {
      for (let i = from; i < until; i++) {
        if (bars.some((symbol, s) => symbol[i]!.low <= bands[s]!.floor || symbol[i]!.high >= bands[s]!.ceiling)) {
          return { index: i }
        }
        seen[i] = account
        const decided = script(i)
        if (decided !== undefined) return { index: i, decisions: decided }
      }
      return { index: until }
    }
  }
  return { decider, seen }
}

describe("BacktestEngine over several symbols", () => {
  const btc = unlistedRules("BTC", bare)
  const eth = unlistedRules("ETH", bare)
  const markets = [{ rules: btc, funding: () => [] }, { rules: eth, funding: () => [] }]
  const pair = (closes: ReadonlyArray<readonly [number, number]>): Bars => {
    const btcBars = closes.map(([b]) => bar(b))
    return [
      btcBars,
      btcBars.map((b, i) => ({
        ...b,
        open: closes[i]![1],
        high: closes[i]![1],
        low: closes[i]![1],
        close: closes[i]![1]
      }))
    ]
  }
  const hold = { operation: "hold" } as const

  it("trades them from one balance: each order is sized against the cash the orders before it left, in the run's order", () => {
    const bars = pair([[100, 10], [110, 12], [120, 9], [130, 9]])
    const { decider, seen } = portfolio((i) =>
      i === 0
        ? [{ operation: "buy", target_portion_of_balance: 0.5 }, { operation: "buy", target_portion_of_balance: 0.5 }]
        : i === 2
        ? [{ operation: "close" }, hold]
        : undefined
    )
    const engine = new BacktestEngine(settings({ feeRate: 0.001 }), markets)
    engine.run(bars, decider)
    const result = engine.finish()
    // BTC takes half of 10 000 (margin + fee), ETH half of what is left.
    const btcSize = 5000 / (1 + 0.001) / 100
    const ethSize = (10_000 - 5000) * 0.5 / (1 + 0.001) / 10
    expect(result.fills.map((f) => [f.symbol, f.side, f.reason])).toEqual([
      ["BTC", "buy", "signal"],
      ["ETH", "buy", "signal"],
      ["BTC", "sell", "signal"],
      ["ETH", "sell", "end_of_data"]
    ])
    expect(result.fills[0]!.quantity).toBeCloseTo(btcSize, 6)
    expect(result.fills[1]!.quantity).toBeCloseTo(ethSize, 6)
    // The program saw both positions and one balance; equity marks both at each close.
    expect(seen[1]!.positions.map((p) => p?.side ?? null)).toEqual(["long", "long"])
    const equity1 = result.equity_curve[1]!.equity
    expect(equity1).toBeCloseTo(seen[1]!.balance + btcSize * 10 + ethSize * 2, 6)
    expect(result.trades.map((t) => [t.symbol, t.exit_reason])).toEqual([["BTC", "signal"], ["ETH", "end_of_data"]])
    // Each symbol's share adds up to the whole.
    expect(result.per_symbol.map((m) => [m.symbol, m.total_trades])).toEqual([["BTC", 1], ["ETH", 1]])
    const sum = (key: "total_pnl" | "total_fees") => result.per_symbol.reduce((a, m) => a + m[key], 0)
    expect(sum("total_pnl")).toBeCloseTo(result.metrics.total_pnl, 6)
    expect(sum("total_fees")).toBeCloseTo(result.metrics.total_fees!, 9)
    // BTC was held at the closes of bars 0 and 1 (closed at bar 2's), ETH at all four.
    expect(result.per_symbol.map((m) => m.exposure_percent)).toEqual([50, 100])
    // The benchmark holds both, equally weighted: BTC +30 %, ETH -10 %.
    expect(result.per_symbol.map((m) => m.buy_and_hold_percent)).toEqual([30.000000000000004, -9.999999999999998])
    expect(result.metrics.buy_and_hold_percent).toBeCloseTo(10, 9)
  })

  it("settles each symbol's exits inside the bar that reaches them, and the other symbol's position stays open", () => {
    const bars = pair([[100, 10], [100, 10], [100, 10], [100, 10]])
    // ETH's bar 2 falls through its stop.
    const eth = bars[1] as Array<Candle>
    eth[2] = { ...eth[2]!, low: 8 }
    const { decider } = portfolio((i) =>
      i === 0
        ? [
          { operation: "buy", target_portion_of_balance: 0.5 },
          { operation: "buy", target_portion_of_balance: 0.5, stop_loss_price: 9 }
        ]
        : undefined
    )
    const engine = new BacktestEngine(settings(), markets)
    engine.run(bars, decider)
    const result = engine.finish()
    expect(result.trades.map((t) => [t.symbol, t.exit_reason, t.exit_time])).toEqual([
      ["ETH", "stop_loss", bars[1]![2]!.time],
      ["BTC", "end_of_data", bars[0]![3]!.time]
    ])
  })

  it("pays each symbol's funding on its own position", () => {
    const bars = pair([[100, 10], [100, 10], [100, 10]])
    const funded = [
      { rules: btc, funding: fundingOf([{ time: bars[0]![1]!.time, rate: 0.01 }]) },
      { rules: eth, funding: fundingOf([{ time: bars[0]![1]!.time, rate: -0.01 }]) }
    ]
    const { decider } = portfolio((i) =>
      i === 0
        ? [{ operation: "buy", target_portion_of_balance: 0.5 }, { operation: "sell", target_portion_of_balance: 0.5 }]
        : undefined
    )
    const engine = new BacktestEngine(settings(), funded)
    engine.run(bars, decider)
    const result = engine.finish()
    // A long pays 1 % of 5000; a short pays 1 % of 2500 when the rate is negative.
    expect(result.per_symbol.map((m) => m.total_funding)).toEqual([-50, -25])
    expect(result.metrics.total_funding).toBe(-75)
  })
})

describe("computeMetrics", () => {
  const trade = (pnl: number) => ({ pnl }) as never
  const totals = { fees: 0, funding: 0, exposedBars: 0, buyAndHoldPercent: null }

  it("derives pnl, win rate, profit factor, drawdown and Sharpe from the curve and the trades", () => {
    const metrics = computeMetrics(settings(), [11_000, 9_900, 12_000], [trade(1000), trade(-500), trade(1500)], totals)
    expect(metrics.total_pnl).toBe(2000)
    expect(metrics.total_pnl_percent).toBe(20)
    expect(metrics.total_trades).toBe(3)
    expect(metrics.win_rate).toBeCloseTo(2 / 3, 12)
    expect(metrics.profit_factor).toBe(5)
    expect(metrics.max_drawdown_percent).toBeCloseTo(10, 9)
    // Returns 0.1, -0.1, 0.2121…: mean 0.070707 over sample deviation 0.158114.
    expect(metrics.sharpe).toBeCloseTo(0.44721, 4)
    // Downside deviation: sqrt(0.01 / 3) = 0.057735; 0.070707 / 0.057735.
    expect(metrics.sortino).toBeCloseTo(1.22468, 4)
    // Three bars a year: (1.2)^(1/3) - 1 = 0.062659 over the 10% drawdown.
    expect(metrics.calmar).toBeCloseTo(0.62659, 4)
    expect(metrics.longest_drawdown_bars).toBe(1)
    expect(metrics.average_trade_pnl).toBeCloseTo(2000 / 3, 9)
  })

  it("adds a long curve's returns in order, as the definitions read: the same doubles, bit for bit", () => {
    // A seeded walk of 10,000 points: the loops must add in the order these reductions do.
    let x = 7
    const curve = Array.from({ length: 10_000 }, (_, i) => {
      x = (x * 48271) % 2147483647
      return 10_000 + 3000 * Math.sin(i / 50) + (x / 2147483647) * 400
    })
    const returns = curve.map((e, i) => e / (i === 0 ? 10_000 : curve[i - 1]!) - 1)
    const mean = returns.reduce((a, r) => a + r, 0) / returns.length
    const deviation = Math.sqrt(returns.reduce((a, r) => a + (r - mean) ** 2, 0) / (returns.length - 1))
    const downside = Math.sqrt(returns.reduce((a, r) => a + Math.min(r, 0) ** 2, 0) / returns.length)
    let peak = -Infinity, worst = 0
    for (const e of [10_000, ...curve]) {
      peak = Math.max(peak, e)
      worst = Math.max(worst, (peak - e) / peak)
    }
    const metrics = computeMetrics(settings(), curve, [], totals)
    expect(metrics.sharpe).toBe((mean / deviation) * Math.sqrt(settings().barsPerYear))
    expect(metrics.sortino).toBe((mean / downside) * Math.sqrt(settings().barsPerYear))
    expect(metrics.max_drawdown_percent).toBe(worst * 100)
  })

  it("answers zeros and a null profit factor without trades or variation", () => {
    expect(computeMetrics(settings(), [10_000, 10_000], [], { ...totals, buyAndHoldPercent: 10 })).toEqual({
      total_pnl: 0,
      total_pnl_percent: 0,
      total_trades: 0,
      win_rate: 0,
      max_drawdown_percent: 0,
      sharpe: 0,
      profit_factor: null,
      sortino: 0,
      calmar: null,
      exposure_percent: 0,
      average_trade_pnl: null,
      longest_drawdown_bars: 0,
      buy_and_hold_percent: 10,
      total_fees: 0,
      total_funding: 0
    })
  })
})
