import { Chunk, Effect, Stream } from "effect"
import type { Decider, ExitBand } from "../sandbox/Decider.js"
import { type Decision, type PositionView, ProgramRunError } from "../sandbox/Decision.js"
import {
  entryPrice,
  entryReached,
  exitPrice,
  type ExitTrigger,
  feeOf,
  reachedFromAbove,
  reachingPrice,
  slippageOf,
  takerPrice
} from "../trading/Fills.js"
import {
  applyFill,
  bestOf,
  dir,
  fundingPayment,
  type Held,
  liquidationFee,
  liquidationPrice,
  sizeOrder,
  stopOf
} from "../trading/Ledger.js"
import { fromMoney, type Money, toMoney } from "../trading/Money.js"
import type { Candle, FundingRate } from "../venues/Venue.js"
import type { BacktestFill, BacktestResult, BacktestSettings, BacktestTrade, ExitReason } from "./Backtest.js"
import { computeMetrics } from "./BacktestMetrics.js"

/** The open position: the rulebook's `Held`, and what its trade record needs. */
interface Open {
  held: Held
  /** Fees paid so far (entries, and the exit of any part closed), charged to the trade when it closes. */
  fees: number
  funding: number
  entryTime: number
  takeProfit: number | undefined
  stopLoss: number | undefined
  /** The trailing stop's distance, and the best price seen since the position opened. */
  trail: number | undefined
  best: number
}

/** The symbol's funding payments whose time lies in `[start, end)`, oldest first. */
export type FundingFeed = (start: number, end: number) => ReadonlyArray<FundingRate>

/** The feed of payments known up front, oldest first: each chunk's found by bisection, not by a pass over them all. */
export const fundingOf = (rates: ReadonlyArray<FundingRate>): FundingFeed => {
  const firstAtOrAfter = (time: number) => {
    let low = 0
    let high = rates.length
    while (low < high) {
      const mid = (low + high) >>> 1
      if (rates[mid]!.time < time) low = mid + 1
      else high = mid
    }
    return low
  }
  return (start, end) => rates.slice(firstAtOrAfter(start), firstAtOrAfter(end))
}

/** A limit or stop entry waiting for the price to reach its level. */
interface Resting {
  readonly decision: Decision
  readonly type: "limit" | "stop"
  readonly side: 1 | -1
  readonly level: number
}

/**
 * The backtest as a state machine over chunks of bars, so any candle source can drive it. It keeps
 * no rules of its own: sizes, fills, margin, liquidation and funding are the rulebook's
 * (`trading/`), as paper trading's ledger applies them. Each bar first pays the funding due inside
 * it and fills the decision of the bar before at its open (with `fillTiming: "next_open"`), then
 * settles take profit, stop loss and liquidation inside its range; the program decides at its
 * close. Deterministic: no clock, no randomness.
 */
export class BacktestEngine {
  /** Free cash, exact: the balance less the open position's margin (the paper ledger's `current_cash`). */
  private cash: Money
  /** `cash` as the paper ledger reads its column back. */
  private free: number
  private open: Open | undefined
  /** Decided at a close, filled at the next bar's open. */
  private pending: Decision | undefined
  /** A limit or stop entry placed and not yet reached. */
  private resting: Resting | undefined
  /** The open time of the last bar whose open was settled. */
  private opened = -Infinity
  private lastBar: Candle | undefined
  /** The payments due over the chunk of bars being run, and the next one to settle. */
  private funding: ReadonlyArray<FundingRate> = []
  private fundingIndex = 0
  private totalFees = 0
  private totalFunding = 0
  private exposedBars = 0
  private firstOpen: number | undefined
  private readonly trades: Array<BacktestTrade> = []
  private readonly fills: Array<BacktestFill> = []
  private readonly times: Array<number> = []
  private readonly equities: Array<number> = []
  private warmedUp = 0

  /** `feed`: the symbol's funding payments, asked for one chunk of bars at a time. */
  constructor(readonly settings: BacktestSettings, private readonly feed: FundingFeed = () => []) {
    this.cash = toMoney(settings.initialBalance)
    this.free = fromMoney(this.cash)
  }

  /**
   * The bars before the start, oldest first: the program sees and decides each of them, flat and
   * with the starting balance, so its window and its own state are full at the start; nothing
   * fills and nothing is measured. A live run replays its window the same way before deciding.
   */
  warmUp(bars: ReadonlyArray<Candle>, decider: Decider): void {
    if (bars.length === 0) return
    decider.chunk(bars)
    const flat = { position: null, balance: this.balance() }
    const anywhere = { floor: -Infinity, ceiling: Infinity }
    for (let i = 0; i < bars.length;) {
      const stop = decider.decide(i, flat, anywhere)
      i = stop.decision === undefined ? stop.index : stop.index + 1
    }
    this.warmedUp += bars.length
  }

  /** Steps through one chunk of bars, oldest first. */
  run(bars: ReadonlyArray<Candle>, decider: Decider): void {
    if (bars.length === 0) return
    decider.chunk(bars)
    // Chunks follow each other, so each payment falls in one chunk's span.
    this.funding = this.feed(bars[0]!.time, bars[bars.length - 1]!.time + this.settings.barMillis)
    this.fundingIndex = 0
    for (let i = 0; i < bars.length;) {
      if (bars[i]!.time > this.opened) this.openBar(bars[i]!)
      const band = this.band()
      const stop = decider.decide(i, this.view(), band, this.nextChange(bars, i))
      // The bars before the stop were quiet: nothing filled, the program held.
      for (; i < stop.index; i++) this.record(bars[i]!)
      if (i === bars.length) break
      const bar = bars[i]!
      if (stop.decision === undefined) {
        // Stopped before a bar with funding due (its open is settled first), or one touching the band.
        if (bar.time > this.opened) continue
        // Settling closes a position or fills an entry the bar reaches, so the next band lets the bar through.
        this.settleInsideBar(bar)
        continue
      }
      if (this.settings.fillTiming === "close") this.apply(stop.decision, bar.close, bar.volume, bar.time)
      else this.pending = stop.decision
      this.record(bar)
      i++
    }
  }

  /** Closes what is still open at the last close and answers the metrics, curve and trades; a decision at the last bar has no open to fill at. */
  finish(): BacktestResult {
    const bar = this.lastBar
    if (bar !== undefined && this.open !== undefined) {
      this.closeAtMarket(bar.close, bar.volume, bar.time, "end_of_data")
      this.equities[this.equities.length - 1] = this.free
    }
    return {
      metrics: computeMetrics(this.settings, this.equities, this.trades, {
        fees: this.totalFees,
        funding: this.totalFunding,
        exposedBars: this.exposedBars,
        firstOpen: this.firstOpen,
        lastClose: bar?.close
      }),
      final_balance: this.free,
      equity_curve: this.times.map((time, i) => ({ time, equity: this.equities[i]! })),
      trades: this.trades,
      fills: this.fills,
      warmed_up_bars: this.warmedUp
    }
  }

  private record(bar: Candle): void {
    this.firstOpen ??= bar.open
    const open = this.open
    if (open !== undefined) {
      this.exposedBars++
      // The trail follows the bar's extreme from the next bar on: inside a bar the order of its high and low is unknown.
      open.best = bestOf(open.held.side, open.best, open.held.side === "long" ? bar.high : bar.low)
    }
    this.lastBar = bar
    this.times.push(bar.time)
    this.equities.push(this.equity(bar.close))
  }

  private view(): { readonly position: PositionView | null; readonly balance: number } {
    const held = this.open?.held
    return {
      position: held === undefined
        ? null
        : { side: held.side, size: held.size, entry_price: held.entry_price, leverage: held.leverage },
      balance: this.balance()
    }
  }

  /** Free cash plus margin, added as a paper run adds its account's two columns. */
  private balance(): number {
    return this.free + (this.open?.held.margin ?? 0)
  }

  private equity(price: number): number {
    const held = this.open?.held
    return held === undefined ? this.free : this.balance() + dir(held.side) * held.size * (price - held.entry_price)
  }

  /** A bar's open: the funding due inside it is paid on the position held then, then the last decision fills. */
  private openBar(bar: Candle): void {
    this.opened = bar.time
    const end = bar.time + this.settings.barMillis
    for (; this.fundingIndex < this.funding.length; this.fundingIndex++) {
      const due = this.funding[this.fundingIndex]!
      if (due.time >= end) break
      if (this.open === undefined || due.time < bar.time) continue
      const paid = fundingPayment(this.open.held, due.rate, bar.open)
      this.credit(toMoney(paid))
      this.open.funding += paid
      this.totalFunding += paid
    }
    const decision = this.pending
    if (decision === undefined) return
    this.pending = undefined
    // The order's size is judged against the bar it was decided on, the last one the program saw.
    this.apply(decision, bar.open, this.lastBar?.volume ?? bar.volume, bar.time)
  }

  /**
   * The first bar after `from` where the account or the exits change without a fill: the next bar
   * while a trailing stop follows the price, else the next with funding due while a position is
   * open. The decider stops before it.
   */
  private nextChange(bars: ReadonlyArray<Candle>, from: number): number {
    if (this.open?.trail !== undefined) return from + 1
    const due = this.funding[this.fundingIndex]
    if (this.open === undefined || due === undefined) return bars.length
    for (let k = from + 1; k < bars.length; k++) {
      if (bars[k]!.time + this.settings.barMillis > due.time) return k
    }
    return bars.length
  }

  private stop(): number | null {
    const p = this.open!
    return stopOf(p.held.side, p.stopLoss ?? null, p.trail ?? null, p.best)
  }

  /** What backs the open position against its losses: its margin, and with cross margin the free cash too. */
  private backing(): number {
    return this.open!.held.margin + (this.settings.marginMode === "cross" ? Math.max(this.free, 0) : 0)
  }

  /**
   * Where the open position's protective exits lie. When the stop and the liquidation price both
   * exist, the one nearer the entry is the adverse exit.
   */
  private exitBand(): ExitBand {
    const p = this.open
    if (p === undefined) return { floor: -Infinity, ceiling: Infinity }
    const d = dir(p.held.side)
    const liquidation = liquidationPrice(p.held, this.settings.rules.margin, this.backing())
    const stop = this.stop()
    const adverse = stop !== null && d * (stop - liquidation) >= 0 ? stop : liquidation
    return d === 1
      ? { floor: adverse, ceiling: p.takeProfit ?? Infinity }
      : { floor: p.takeProfit ?? -Infinity, ceiling: adverse }
  }

  /** The exits' band, narrowed to where a resting entry is reached: the prices a bar must not touch to be quiet. */
  private band(): ExitBand {
    const band = this.exitBand()
    const r = this.resting
    if (r === undefined) return band
    return reachedFromAbove(r.type, r.side)
      ? { floor: Math.max(band.floor, r.level), ceiling: band.ceiling }
      : { floor: band.floor, ceiling: Math.min(band.ceiling, r.level) }
  }

  /** What the bar reaches first: the position's protective exits, then a resting entry. */
  private settleInsideBar(bar: Candle): void {
    if (this.settleExits(bar)) return
    const r = this.resting
    if (r === undefined || !entryReached(r.type, r.side, r.level, reachingPrice(r.type, r.side, bar))) return
    this.resting = undefined
    // A bar that opens past the level fills it at the open.
    const seen = entryReached(r.type, r.side, r.level, bar.open) ? bar.open : r.level
    this.apply(r.decision, entryPrice(r.type, r.side, seen, this.settings), bar.volume, bar.time, r.type)
  }

  /**
   * The open position's protective exits against the bar's range; whether one filled. When the
   * adverse and the favourable exit both lie inside one bar, the adverse one is assumed first (the
   * pessimistic reading). A bar that opens past an exit's level fills it at the open.
   */
  private settleExits(bar: Candle): boolean {
    const p = this.open
    if (p === undefined) return false
    const band = this.exitBand()
    const d = dir(p.held.side)
    const seen = (level: number, favourable: boolean) =>
      d * (bar.open - level) * (favourable ? 1 : -1) >= 0 ? bar.open : level
    const adverse = d === 1 ? band.floor : band.ceiling
    if (d === 1 ? bar.low <= adverse : bar.high >= adverse) {
      // A gap through the liquidation price still liquidates at it: the loss stops at the margin.
      if (adverse === this.stop()) this.exit("stop_loss", seen(adverse, false), bar.time)
      else this.exit("liquidation", adverse, bar.time)
      return true
    }
    const favourable = d === 1 ? band.ceiling : band.floor
    if (d === 1 ? bar.high >= favourable : bar.low <= favourable) {
      this.exit("take_profit", seen(favourable, true), bar.time)
      return true
    }
    return false
  }

  private exit(trigger: ExitTrigger, seen: number, time: number): void {
    const held = this.open!.held
    const price = exitPrice(trigger, dir(held.side), seen, this.settings)
    const fee = trigger === "liquidation"
      ? liquidationFee(held, price, this.settings.rules.margin, this.backing())
      : feeOf(held.size * price, trigger, this.settings)
    this.fill(held.side === "long" ? "sell" : "buy", held.size, price, fee, held.leverage, time, trigger)
  }

  private closeAtMarket(price: number, volume: number, time: number, reason: ExitReason): void {
    const held = this.open!.held
    const side = held.side === "long" ? "sell" : "buy"
    const filled = takerPrice(price, held.side === "long" ? -1 : 1, slippageOf(this.settings, held.size, volume))
    this.fill(side, held.size, filled, feeOf(held.size * filled, "market", this.settings), held.leverage, time, reason)
  }

  /**
   * A decision, filled as paper trading fills it: one order sized by the rulebook, which may close
   * the position and open the other way. Any decision but hold replaces a resting entry; a limit or
   * stop entry not reached at `price` rests (unless `ioc`), one reached fills at once at market.
   * `resting` names the entry being filled at `price`, its own fill price, instead.
   */
  private apply(decision: Decision, price: number, volume: number, time: number, resting?: "limit" | "stop"): void {
    if (decision.operation === "hold") return
    this.resting = undefined
    const held = this.open?.held ?? null
    const side = decision.operation === "close" ? (held?.side === "long" ? "sell" : "buy") : decision.operation
    const sign = side === "buy" ? 1 : -1
    const type = decision.order_type ?? "market"
    if (resting === undefined && type !== "market" && !entryReached(type, sign, decision.entry_price!, price)) {
      if (decision.time_in_force !== "ioc") this.resting = { decision, type, side: sign, level: decision.entry_price! }
      return
    }
    const leverage = decision.leverage ?? this.settings.leverage
    const sizeAt = (fillPrice: number) =>
      sizeOrder(decision, held, {
        freeCash: this.free,
        feeRate: this.settings.takerFeeRate,
        leverage,
        price: fillPrice,
        rules: this.settings.rules
      })
    const first = sizeAt(resting === undefined ? takerPrice(price, sign, this.settings.slippage) : price)
    // An order the symbol's rules refuse (below its minimums, above its leverage cap) is not placed, as on paper.
    if (first._tag !== "Order") return
    // The market impact of the volume model depends on the size; the size is then taken again at that price.
    const filled = resting === undefined
      ? takerPrice(price, sign, slippageOf(this.settings, first.quantity, volume))
      : price
    const sizing = this.settings.slippageModel === "fixed" || resting !== undefined ? first : sizeAt(filled)
    if (sizing._tag !== "Order") return
    const fee = feeOf(sizing.quantity * filled, resting ?? "market", this.settings)
    const opposite = held !== null && held.side !== (side === "buy" ? "long" : "short")
    const reversing = opposite && sizing.quantity > held.size
    this.fill(side, sizing.quantity, filled, fee, leverage, time, reversing ? "reversal" : "signal")
    // A new position takes the decision's exits, an addition those it gives; a reduction keeps them.
    const open = this.open
    if (open === undefined || (opposite && !reversing)) return
    const opened = open.entryTime === time
    open.takeProfit = opened ? decision.take_profit_price : decision.take_profit_price ?? open.takeProfit
    open.stopLoss = opened ? decision.stop_loss_price : decision.stop_loss_price ?? open.stopLoss
    open.trail = opened ? decision.trailing_stop : decision.trailing_stop ?? open.trail
  }

  private credit(amount: Money): void {
    this.cash += amount
    this.free = fromMoney(this.cash)
  }

  /** One fill through the rulebook's ledger; the part that closes the position is a trade. */
  private fill(
    side: "buy" | "sell",
    quantity: number,
    price: number,
    fee: number,
    leverage: number,
    time: number,
    reason: ExitReason
  ): void {
    const before = this.open
    const effect = applyFill(before?.held ?? null, { side, quantity, price, fee, leverage })
    this.credit(effect.cash)
    this.totalFees += fee
    this.fills.push({ time, side, quantity, price, fee, reason })
    // The fee splits between the part that closes and the part that opens, by quantity.
    const closingFee = fee * (effect.closed / quantity)
    if (before !== undefined && effect.closed > 0) {
      const whole = effect.closed === before.held.size
      const share = effect.closed / before.held.size
      const entryFees = before.fees * share
      const funding = before.funding * share
      this.trades.push({
        side: before.held.side,
        size: effect.closed,
        entry_time: before.entryTime,
        entry_price: before.held.entry_price,
        exit_time: time,
        exit_price: price,
        fee: entryFees + closingFee,
        funding,
        pnl: effect.realized - entryFees - closingFee + funding,
        exit_reason: reason
      })
      if (!whole) {
        before.fees -= entryFees
        before.funding -= funding
      }
    }
    const position = effect.position
    if (position === null) {
      this.open = undefined
    } else if (before === undefined || before.held.side !== position.side) {
      this.open = {
        held: position,
        fees: fee - closingFee,
        funding: 0,
        entryTime: time,
        takeProfit: undefined,
        stopLoss: undefined,
        trail: undefined,
        best: price
      }
    } else {
      before.held = position
      before.fees += fee - closingFee
    }
  }
}

/**
 * Runs a backtest over candles from any source (oldest first), with the symbol's funding payments
 * for each chunk, after feeding the program the `warmup` bars before them. The engine steps through each chunk synchronously; between chunks the fiber
 * yields, so a long run neither blocks the server nor ignores interruption.
 */
export const runBacktest = <E, R>(
  settings: BacktestSettings,
  candles: Stream.Stream<Candle, E, R>,
  decider: Decider,
  funding: FundingFeed = () => [],
  warmup: ReadonlyArray<Candle> = []
): Effect.Effect<BacktestResult, E | ProgramRunError, R> =>
  Effect.suspend(() => {
    const engine = new BacktestEngine(settings, funding)
    // The program's own failure fails the run; anything else is a defect.
    const step = (work: () => void) =>
      Effect.suspend(() => {
        try {
          work()
          return Effect.void
        } catch (e) {
          return e instanceof ProgramRunError ? Effect.fail(e) : Effect.die(e)
        }
      })
    return step(() => engine.warmUp(warmup, decider)).pipe(
      Effect.zipRight(
        Stream.runForEachChunk(candles, (chunk) => step(() => engine.run(Chunk.toReadonlyArray(chunk), decider)))
      ),
      Effect.map(() => engine.finish())
    )
  }).pipe(Effect.withSpan("BacktestEngine.run"))
