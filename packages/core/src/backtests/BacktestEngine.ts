import { Chunk, Effect, Stream } from "effect"
import type { Decider, ExitBand } from "../sandbox/Decider.js"
import { type Decision, type PositionView, ProgramRunError } from "../sandbox/Decision.js"
import type { Candle } from "../venues/Venue.js"
import type { BacktestResult, BacktestSettings, BacktestTrade, ExitReason } from "./Backtest.js"
import { computeMetrics } from "./BacktestMetrics.js"

interface Position {
  /** +1 long, -1 short: signs every price comparison so one code path serves both sides. */
  readonly dir: 1 | -1
  size: number
  entry: number
  margin: number
  /** Entry fees paid so far, charged to the trade's pnl when it closes. */
  fees: number
  entryTime: number
  takeProfit: number | undefined
  stopLoss: number | undefined
}

/**
 * The backtest as a state machine over chunks of bars, so any candle source can drive it: each bar
 * settles take-profit, stop-loss and liquidation inside its range, then the program decides at the
 * bar's close and the decision fills at that close. Deterministic: no clock, no randomness.
 */
export class BacktestEngine {
  private balance: number
  private position: Position | undefined
  private lastBar: Candle | undefined
  private readonly trades: Array<BacktestTrade> = []
  private readonly times: Array<number> = []
  private readonly equities: Array<number> = []

  constructor(readonly settings: BacktestSettings) {
    this.balance = settings.initialBalance
  }

  /** Steps through one chunk of bars, oldest first. */
  run(bars: ReadonlyArray<Candle>, decider: Decider): void {
    decider.chunk(bars)
    for (let i = 0; i < bars.length;) {
      const band = this.band()
      const stop = decider.decide(i, { position: this.positionView(), balance: this.balance }, band)
      // The bars before the stop were quiet: nothing filled, the program held.
      for (; i < stop.index; i++) this.record(bars[i]!)
      if (i === bars.length) break
      const bar = bars[i]!
      if (stop.decision === undefined) {
        // Settling closes a position the bar touches, so the next band lets the bar through.
        this.settleInsideBar(bar, band)
        continue
      }
      this.apply(stop.decision, bar)
      this.record(bar)
      i++
    }
  }

  /** Closes what is still open at the last close and answers the metrics, curve and trades. */
  finish(): BacktestResult {
    const bar = this.lastBar
    if (bar !== undefined && this.position !== undefined) {
      this.close(this.marketPrice(bar.close, -this.position.dir), bar.time, "end_of_data")
      this.equities[this.equities.length - 1] = this.balance
    }
    return {
      metrics: computeMetrics(this.settings, this.equities, this.trades),
      final_balance: this.balance,
      equity_curve: this.times.map((time, i) => ({ time, equity: this.equities[i]! })),
      trades: this.trades
    }
  }

  private record(bar: Candle): void {
    this.lastBar = bar
    this.times.push(bar.time)
    this.equities.push(this.equity(bar.close))
  }

  private positionView(): PositionView | null {
    const p = this.position
    return p === undefined ? null : {
      side: p.dir === 1 ? "long" : "short",
      size: p.size,
      entry_price: p.entry,
      leverage: (p.size * p.entry) / p.margin
    }
  }

  private equity(price: number): number {
    const p = this.position
    return p === undefined ? this.balance : this.balance + p.dir * p.size * (price - p.entry)
  }

  /** A market fill moves the price against the taker by the slippage. */
  private marketPrice(price: number, dir: number): number {
    return price * (1 + dir * this.settings.slippage)
  }

  /**
   * Where the open position's protective exits lie. When the stop and the liquidation price both
   * exist, the one nearer the entry is the adverse exit.
   */
  private band(): ExitBand {
    const p = this.position
    if (p === undefined) return { floor: -Infinity, ceiling: Infinity }
    // Isolated margin: the position is liquidated when its loss reaches its margin.
    const liquidation = p.entry - (p.dir * p.margin) / p.size
    const adverse = p.stopLoss !== undefined && p.dir * (p.stopLoss - liquidation) >= 0 ? p.stopLoss : liquidation
    return p.dir === 1
      ? { floor: adverse, ceiling: p.takeProfit ?? Infinity }
      : { floor: p.takeProfit ?? -Infinity, ceiling: adverse }
  }

  /**
   * The protective exits of `band`, checked against the bar's range. When the adverse and the
   * favourable exit both lie inside one bar, the adverse one is assumed first (the pessimistic
   * reading).
   */
  private settleInsideBar(bar: Candle, band: ExitBand): void {
    const p = this.position
    if (p === undefined) return
    const { dir } = p
    const adverse = dir === 1 ? band.floor : band.ceiling
    if (dir === 1 ? bar.low <= adverse : bar.high >= adverse) {
      if (adverse !== p.stopLoss) return this.close(adverse, bar.time, "liquidation")
      // A stop is a market order once touched; a gap through it fills at the open.
      const touched = dir * (bar.open - adverse) <= 0 ? bar.open : adverse
      return this.close(this.marketPrice(touched, -dir), bar.time, "stop_loss")
    }
    const favourable = dir === 1 ? band.ceiling : band.floor
    if (dir === 1 ? bar.high >= favourable : bar.low <= favourable) {
      // A take-profit is a resting limit order: it fills at its price, or better on a gap.
      this.close(dir * (bar.open - favourable) >= 0 ? bar.open : favourable, bar.time, "take_profit")
    }
  }

  private apply(decision: Decision, bar: Candle): void {
    if (decision.operation === "hold") return
    const p = this.position
    if (decision.operation === "close") {
      if (p !== undefined) this.close(this.marketPrice(bar.close, -p.dir), bar.time, "signal")
      return
    }
    const dir = decision.operation === "buy" ? 1 : -1
    if (p !== undefined && p.dir !== dir) this.close(this.marketPrice(bar.close, dir), bar.time, "reversal")
    this.open(dir, decision, bar)
  }

  /** Opens, or averages into, a position with the decision's share of the free balance as margin and fee. */
  private open(dir: 1 | -1, decision: Decision, bar: Candle): void {
    const { feeRate } = this.settings
    const leverage = decision.leverage ?? this.settings.leverage
    const free = this.balance - (this.position?.margin ?? 0)
    const spend = (decision.target_portion_of_balance ?? 1) * free
    if (spend <= 0) return
    const price = this.marketPrice(bar.close, dir)
    // margin + fee = spend, with fee = margin * leverage * feeRate.
    const margin = spend / (1 + leverage * feeRate)
    const size = (margin * leverage) / price
    const fee = margin * leverage * feeRate
    this.balance -= fee
    const p = this.position ?? (this.position = {
      dir,
      size: 0,
      entry: price,
      margin: 0,
      fees: 0,
      entryTime: bar.time,
      takeProfit: undefined,
      stopLoss: undefined
    })
    p.entry = (p.size * p.entry + size * price) / (p.size + size)
    p.size += size
    p.margin += margin
    p.fees += fee
    p.takeProfit = decision.take_profit_price ?? p.takeProfit
    p.stopLoss = decision.stop_loss_price ?? p.stopLoss
  }

  private close(price: number, time: number, reason: ExitReason): void {
    const p = this.position!
    const gross = p.dir * p.size * (price - p.entry)
    // A liquidation takes the margin and nothing more.
    const exitFee = reason === "liquidation" ? 0 : p.size * price * this.settings.feeRate
    this.balance += gross - exitFee
    this.trades.push({
      side: p.dir === 1 ? "long" : "short",
      size: p.size,
      entry_time: p.entryTime,
      entry_price: p.entry,
      exit_time: time,
      exit_price: price,
      fee: p.fees + exitFee,
      pnl: gross - p.fees - exitFee,
      exit_reason: reason
    })
    this.position = undefined
  }
}

/**
 * Runs a backtest over candles from any source (oldest first). The engine steps through each chunk
 * synchronously; between chunks the fiber yields, so a long run neither blocks the server nor
 * ignores interruption.
 */
export const runBacktest = <E, R>(
  settings: BacktestSettings,
  candles: Stream.Stream<Candle, E, R>,
  decider: Decider
): Effect.Effect<BacktestResult, E | ProgramRunError, R> =>
  Effect.suspend(() => {
    const engine = new BacktestEngine(settings)
    return candles.pipe(
      Stream.runForEachChunk((chunk) =>
        Effect.suspend(() => {
          try {
            engine.run(Chunk.toReadonlyArray(chunk), decider)
            return Effect.void
          } catch (e) {
            return e instanceof ProgramRunError ? Effect.fail(e) : Effect.die(e)
          }
        })
      ),
      Effect.map(() => engine.finish())
    )
  }).pipe(Effect.withSpan("BacktestEngine.run"))
