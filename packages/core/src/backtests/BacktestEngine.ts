import { Chunk, Effect, Stream } from "effect"
import { withRequestSpan } from "../http/RequestSpan.js"
import type { Bars, Decider, ExitBand } from "../sandbox/Decider.js"
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
import type { Candle, FundingRate, SymbolSpec } from "../venues/Venue.js"
import type {
  BacktestFill,
  BacktestResult,
  BacktestSettings,
  BacktestTrade,
  ExitReason,
  SymbolMetrics
} from "./Backtest.js"
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

/** A symbol's funding payments whose time lies in `[start, end)`, oldest first. */
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

/** A symbol a backtest trades: its rules at the venue and its funding payments. */
export interface MarketTerms {
  readonly rules: SymbolSpec
  readonly funding: FundingFeed
}

/** A limit or stop entry waiting for the price to reach its level. */
interface Resting {
  readonly decision: Decision
  readonly type: "limit" | "stop"
  readonly side: 1 | -1
  readonly level: number
}

/** One symbol's side of a run: its terms, what is open, pending or resting on it, and its own counts. */
interface Book {
  readonly symbol: string
  /** The run's settings with the symbol's rules. */
  readonly terms: BacktestSettings
  readonly feed: FundingFeed
  open: Open | undefined
  /** Decided at a close, filled at the next bar's open. */
  pending: Decision | undefined
  /** A limit or stop entry placed and not yet reached. */
  resting: Resting | undefined
  lastBar: Candle | undefined
  /** The payments due over the chunk of bars being run, and the next one to settle. */
  funding: ReadonlyArray<FundingRate>
  fundingIndex: number
  fees: number
  paidFunding: number
  exposedBars: number
  firstOpen: number | undefined
  readonly trades: Array<BacktestTrade>
}

const anywhere: ExitBand = { floor: -Infinity, ceiling: Infinity }

/**
 * The backtest as a state machine over chunks of bars, so any candle source can drive it. It keeps
 * no rules of its own: sizes, fills, margin, liquidation and funding are the rulebook's
 * (`trading/`), as paper trading's ledger applies them. It trades one or more symbols from one
 * balance, each in a `Book`; their bars come aligned (the same times). Each bar first pays the
 * funding due inside it and fills the decisions of the bar before at its open (with `fillTiming:
 * "next_open"`), symbol by symbol in the run's order, then settles take profit, stop loss and
 * liquidation inside its range; the program decides at its close. Deterministic: no clock, no
 * randomness.
 */
export class BacktestEngine {
  /** Free cash, exact: the balance less the open positions' margin (the paper ledger's `current_cash`). */
  private cash: Money
  /** `cash` as the paper ledger reads its column back. */
  private free: number
  private readonly books: ReadonlyArray<Book>
  /** The open time of the last bar whose open was settled. */
  private opened = -Infinity
  private totalFees = 0
  private totalFunding = 0
  private exposedBars = 0
  private readonly trades: Array<BacktestTrade> = []
  private readonly fills: Array<BacktestFill> = []
  private readonly times: Array<number> = []
  private readonly equities: Array<number> = []
  private warmedUp = 0

  /** `markets`: the symbols traded, in the order their bars come; by default the settings' symbol, without funding. */
  constructor(
    readonly settings: BacktestSettings,
    markets: ReadonlyArray<MarketTerms> = [{ rules: settings.rules, funding: () => [] }]
  ) {
    this.cash = toMoney(settings.initialBalance)
    this.free = fromMoney(this.cash)
    this.books = markets.map((market) => ({
      symbol: market.rules.symbol,
      terms: { ...settings, rules: market.rules },
      feed: market.funding,
      open: undefined,
      pending: undefined,
      resting: undefined,
      lastBar: undefined,
      funding: [],
      fundingIndex: 0,
      fees: 0,
      paidFunding: 0,
      exposedBars: 0,
      firstOpen: undefined,
      trades: []
    }))
  }

  /**
   * The bars before the start, oldest first, one array per symbol: the program sees and decides
   * each of them, flat and with the starting balance, so its window and its own state are full at
   * the start; nothing fills and nothing is measured. A live run replays its window the same way
   * before deciding.
   */
  warmUp(bars: ReadonlyArray<ReadonlyArray<Candle>>, decider: Decider): void {
    const length = bars[0]?.length ?? 0
    if (length === 0) return
    decider.chunk(bars)
    const flat = { positions: this.books.map(() => null), balance: this.balance() }
    const bands = this.books.map(() => anywhere)
    for (let i = 0; i < length;) {
      const stop = decider.decide(i, flat, bands)
      i = stop.decisions === undefined ? stop.index : stop.index + 1
    }
    this.warmedUp += length
  }

  /** Steps through one chunk of bars, oldest first, one array per symbol. */
  run(bars: ReadonlyArray<ReadonlyArray<Candle>>, decider: Decider): void {
    const times = bars[0]!
    if (times.length === 0) return
    decider.chunk(bars)
    // Chunks follow each other, so each payment falls in one chunk's span.
    for (const book of this.books) {
      book.funding = book.feed(times[0]!.time, times[times.length - 1]!.time + this.settings.barMillis)
      book.fundingIndex = 0
    }
    for (let i = 0; i < times.length;) {
      if (times[i]!.time > this.opened) this.openBar(bars, i)
      const stop = decider.decide(i, this.view(), this.books.map((book) => this.band(book)), this.nextChange(times, i))
      // The bars before the stop were quiet: nothing filled, the program held.
      for (; i < stop.index; i++) this.record(bars, i)
      if (i === times.length) break
      if (stop.decisions === undefined) {
        // Stopped before a bar with funding due (its open is settled first), or one touching a band.
        if (times[i]!.time > this.opened) continue
        // Settling closes a position or fills an entry the bar reaches, so the next bands let the bar through.
        this.books.forEach((book, b) => this.settleInsideBar(book, bars[b]![i]!))
        continue
      }
      this.books.forEach((book, b) => {
        const decision = stop.decisions![b]!
        const bar = bars[b]![i]!
        if (this.settings.fillTiming === "close") this.apply(book, decision, bar.close, bar.volume, bar.time)
        else if (decision.operation !== "hold") book.pending = decision
      })
      this.record(bars, i)
      i++
    }
  }

  /**
   * Decisions taken outside `run` at the close of the last bar it stepped, one per symbol (a hold
   * where none): they fill at the next bar's open, as a decider's do with `fillTiming:
   * "next_open"`. A decider that must wait for its answer (a model) steps the engine to the bar with
   * holds, asks, then decides here.
   */
  decideAtClose(decisions: ReadonlyArray<Decision>): void {
    this.books.forEach((book, b) => {
      const decision = decisions[b]
      if (decision !== undefined && decision.operation !== "hold") book.pending = decision
    })
  }

  /**
   * The account between two bars: its free cash, its balance (cash and margin), each symbol's open
   * position with its exits (null when flat), and its fills so far.
   */
  state(): {
    readonly cash: number
    readonly balance: number
    readonly positions: ReadonlyArray<
      (PositionView & { readonly take_profit_price: number | null; readonly stop_loss_price: number | null }) | null
    >
    readonly fills: ReadonlyArray<BacktestFill>
  } {
    const { positions } = this.view()
    return {
      cash: this.free,
      balance: this.balance(),
      positions: this.books.map(({ open }, b) => {
        const view = positions[b]!
        return open === undefined || view === null
          ? null
          : { ...view, take_profit_price: open.takeProfit ?? null, stop_loss_price: open.stopLoss ?? null }
      }),
      fills: this.fills
    }
  }

  /**
   * Closes what is still open at the last close and answers the metrics, curve and trades; a
   * decision at the last bar has no open to fill at.
   */
  finish(): BacktestResult {
    let closed = false
    for (const book of this.books) {
      const bar = book.lastBar
      if (bar === undefined || book.open === undefined) continue
      this.closeAtMarket(book, bar.close, bar.volume, bar.time, "end_of_data")
      closed = true
    }
    if (closed) this.equities[this.equities.length - 1] = this.free
    const barCount = this.equities.length
    const symbols = this.books.map((book) => symbolMetrics(book, barCount))
    const benchmarks = symbols.flatMap((s) => s.buy_and_hold_percent === null ? [] : [s.buy_and_hold_percent])
    return {
      metrics: computeMetrics(this.settings, this.equities, this.trades, {
        fees: this.totalFees,
        funding: this.totalFunding,
        exposedBars: this.exposedBars,
        // Equal weights over the symbols: the benchmark of holding them all from the start.
        buyAndHoldPercent: benchmarks.length === 0 ? null : benchmarks.reduce((a, b) => a + b, 0) / benchmarks.length
      }),
      per_symbol: symbols,
      final_balance: this.free,
      equity_curve: this.times.map((time, i) => ({ time, equity: this.equities[i]! })),
      trades: this.trades,
      fills: this.fills,
      warmed_up_bars: this.warmedUp
    }
  }

  // Every bar passes here: an index loop, as a closure that assigns `exposed` and `equity` would be allocated per bar.
  private record(bars: ReadonlyArray<ReadonlyArray<Candle>>, i: number): void {
    let exposed = false
    let equity = this.free
    for (let b = 0; b < this.books.length; b++) {
      const book = this.books[b]!
      const bar = bars[b]![i]!
      book.firstOpen ??= bar.open
      book.lastBar = bar
      const open = book.open
      if (open === undefined) continue
      exposed = true
      book.exposedBars++
      equity += open.held.margin + dir(open.held.side) * open.held.size * (bar.close - open.held.entry_price)
      // The trail follows the bar's extreme from the next bar on: inside a bar the order of its high and low is unknown.
      open.best = bestOf(open.held.side, open.best, open.held.side === "long" ? bar.high : bar.low)
    }
    if (exposed) this.exposedBars++
    this.times.push(bars[0]![i]!.time)
    this.equities.push(equity)
  }

  private view(): {
    readonly positions: ReadonlyArray<PositionView | null>
    readonly balance: number
  } {
    return {
      positions: this.books.map(({ open }) =>
        open === undefined
          ? null
          : {
            side: open.held.side,
            size: open.held.size,
            entry_price: open.held.entry_price,
            leverage: open.held.leverage
          }
      ),
      balance: this.balance()
    }
  }

  /** Free cash plus margin, added as a paper run adds its account's two columns. */
  private balance(): number {
    let balance = this.free
    for (const book of this.books) balance += book.open?.held.margin ?? 0
    return balance
  }

  /** A bar's open: the funding due inside it is paid on the positions held then, then the last decisions fill. */
  private openBar(bars: ReadonlyArray<ReadonlyArray<Candle>>, i: number): void {
    const time = bars[0]![i]!.time
    this.opened = time
    const end = time + this.settings.barMillis
    this.books.forEach((book, b) => {
      const bar = bars[b]![i]!
      for (; book.fundingIndex < book.funding.length; book.fundingIndex++) {
        const due = book.funding[book.fundingIndex]!
        if (due.time >= end) break
        if (book.open === undefined || due.time < time) continue
        const paid = fundingPayment(book.open.held, due.rate, bar.open)
        this.credit(toMoney(paid))
        book.open.funding += paid
        book.paidFunding += paid
        this.totalFunding += paid
      }
    })
    this.books.forEach((book, b) => {
      const decision = book.pending
      if (decision === undefined) return
      book.pending = undefined
      const bar = bars[b]![i]!
      // The order's size is judged against the bar it was decided on, the last one the program saw.
      this.apply(book, decision, bar.open, book.lastBar?.volume ?? bar.volume, bar.time)
    })
  }

  /**
   * The first bar after `from` where the account or the exits change without a fill: the next bar
   * while a trailing stop follows the price, else the next with funding due on an open position.
   * The decider stops before it.
   */
  private nextChange(times: ReadonlyArray<Candle>, from: number): number {
    let next = times.length
    for (const book of this.books) {
      if (book.open === undefined) continue
      if (book.open.trail !== undefined) return from + 1
      const due = book.funding[book.fundingIndex]
      if (due === undefined) continue
      for (let k = from + 1; k < next; k++) {
        if (times[k]!.time + this.settings.barMillis > due.time) {
          next = k
          break
        }
      }
    }
    return next
  }

  private stop(book: Book): number | null {
    const p = book.open!
    return stopOf(p.held.side, p.stopLoss ?? null, p.trail ?? null, p.best)
  }

  /** What backs an open position against its losses: its margin, and with cross margin the free cash too. */
  private backing(book: Book): number {
    return book.open!.held.margin + (this.settings.marginMode === "cross" ? Math.max(this.free, 0) : 0)
  }

  /**
   * Where the open position's protective exits lie. When the stop and the liquidation price both
   * exist, the one nearer the entry is the adverse exit.
   */
  private exitBand(book: Book): ExitBand {
    const p = book.open
    if (p === undefined) return anywhere
    const d = dir(p.held.side)
    const liquidation = liquidationPrice(p.held, book.terms.rules.margin, this.backing(book))
    const stop = this.stop(book)
    const adverse = stop !== null && d * (stop - liquidation) >= 0 ? stop : liquidation
    return d === 1
      ? { floor: adverse, ceiling: p.takeProfit ?? Infinity }
      : { floor: p.takeProfit ?? -Infinity, ceiling: adverse }
  }

  /** The exits' band, narrowed to where a resting entry is reached: the prices a bar must not touch to be quiet. */
  private band(book: Book): ExitBand {
    const band = this.exitBand(book)
    const r = book.resting
    if (r === undefined) return band
    return reachedFromAbove(r.type, r.side)
      ? { floor: Math.max(band.floor, r.level), ceiling: band.ceiling }
      : { floor: band.floor, ceiling: Math.min(band.ceiling, r.level) }
  }

  /** What the bar reaches first: the position's protective exits, then a resting entry. */
  private settleInsideBar(book: Book, bar: Candle): void {
    if (this.settleExits(book, bar)) return
    const r = book.resting
    if (r === undefined || !entryReached(r.type, r.side, r.level, reachingPrice(r.type, r.side, bar))) return
    book.resting = undefined
    // A bar that opens past the level fills it at the open.
    const seen = entryReached(r.type, r.side, r.level, bar.open) ? bar.open : r.level
    this.apply(book, r.decision, entryPrice(r.type, r.side, seen, book.terms), bar.volume, bar.time, r.type)
  }

  /**
   * The open position's protective exits against the bar's range; whether one filled. When the
   * adverse and the favourable exit both lie inside one bar, the adverse one is assumed first (the
   * pessimistic reading). A bar that opens past an exit's level fills it at the open.
   */
  private settleExits(book: Book, bar: Candle): boolean {
    const p = book.open
    if (p === undefined) return false
    const band = this.exitBand(book)
    const d = dir(p.held.side)
    const seen = (level: number, favourable: boolean) =>
      d * (bar.open - level) * (favourable ? 1 : -1) >= 0 ? bar.open : level
    const adverse = d === 1 ? band.floor : band.ceiling
    if (d === 1 ? bar.low <= adverse : bar.high >= adverse) {
      // A gap through the liquidation price still liquidates at it: the loss stops at the margin.
      if (adverse === this.stop(book)) this.exit(book, "stop_loss", seen(adverse, false), bar.time)
      else this.exit(book, "liquidation", adverse, bar.time)
      return true
    }
    const favourable = d === 1 ? band.ceiling : band.floor
    if (d === 1 ? bar.high >= favourable : bar.low <= favourable) {
      this.exit(book, "take_profit", seen(favourable, true), bar.time)
      return true
    }
    return false
  }

  private exit(book: Book, trigger: ExitTrigger, seen: number, time: number): void {
    const held = book.open!.held
    const price = exitPrice(trigger, dir(held.side), seen, book.terms)
    const fee = trigger === "liquidation"
      ? liquidationFee(held, price, book.terms.rules.margin, this.backing(book))
      : feeOf(held.size * price, trigger, book.terms)
    this.fill(book, held.side === "long" ? "sell" : "buy", held.size, price, fee, held.leverage, time, trigger)
  }

  private closeAtMarket(book: Book, price: number, volume: number, time: number, reason: ExitReason): void {
    const held = book.open!.held
    const side = held.side === "long" ? "sell" : "buy"
    const filled = takerPrice(price, held.side === "long" ? -1 : 1, slippageOf(book.terms, held.size, volume))
    this.fill(
      book,
      side,
      held.size,
      filled,
      feeOf(held.size * filled, "market", book.terms),
      held.leverage,
      time,
      reason
    )
  }

  /**
   * A decision, filled as paper trading fills it: one order sized by the rulebook, which may close
   * the position and open the other way. Any decision but hold replaces a resting entry; a limit or
   * stop entry not reached at `price` rests (unless `ioc`), one reached fills at once at market.
   * `resting` names the entry being filled at `price`, its own fill price, instead.
   */
  private apply(
    book: Book,
    decision: Decision,
    price: number,
    volume: number,
    time: number,
    resting?: "limit" | "stop"
  ): void {
    if (decision.operation === "hold") return
    book.resting = undefined
    const held = book.open?.held ?? null
    const side = decision.operation === "close" ? (held?.side === "long" ? "sell" : "buy") : decision.operation
    const sign = side === "buy" ? 1 : -1
    const type = decision.order_type ?? "market"
    if (resting === undefined && type !== "market" && !entryReached(type, sign, decision.entry_price!, price)) {
      if (decision.time_in_force !== "ioc") book.resting = { decision, type, side: sign, level: decision.entry_price! }
      return
    }
    const terms = book.terms
    const leverage = decision.leverage ?? terms.leverage
    const sizeAt = (fillPrice: number) =>
      sizeOrder(decision, held, {
        freeCash: this.free,
        feeRate: terms.takerFeeRate,
        leverage,
        price: fillPrice,
        rules: terms.rules
      })
    const first = sizeAt(resting === undefined ? takerPrice(price, sign, terms.slippage) : price)
    // An order the symbol's rules refuse (below its minimums, above its leverage cap) is not placed, as on paper.
    if (first._tag !== "Order") return
    // The market impact of the volume model depends on the size; the size is then taken again at that price.
    const filled = resting === undefined
      ? takerPrice(price, sign, slippageOf(terms, first.quantity, volume))
      : price
    const sizing = terms.slippageModel === "fixed" || resting !== undefined ? first : sizeAt(filled)
    if (sizing._tag !== "Order") return
    const fee = feeOf(sizing.quantity * filled, resting ?? "market", terms)
    const opposite = held !== null && held.side !== (side === "buy" ? "long" : "short")
    const reversing = opposite && sizing.quantity > held.size
    this.fill(book, side, sizing.quantity, filled, fee, leverage, time, reversing ? "reversal" : "signal")
    // A new position takes the decision's exits, an addition those it gives; a reduction keeps them.
    const open = book.open
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
    book: Book,
    side: "buy" | "sell",
    quantity: number,
    price: number,
    fee: number,
    leverage: number,
    time: number,
    reason: ExitReason
  ): void {
    const before = book.open
    const effect = applyFill(before?.held ?? null, { side, quantity, price, fee, leverage })
    this.credit(effect.cash)
    this.totalFees += fee
    book.fees += fee
    this.fills.push({ symbol: book.symbol, time, side, quantity, price, fee, reason })
    // The fee splits between the part that closes and the part that opens, by quantity.
    const closingFee = fee * (effect.closed / quantity)
    if (before !== undefined && effect.closed > 0) {
      const whole = effect.closed === before.held.size
      const share = effect.closed / before.held.size
      const entryFees = before.fees * share
      const funding = before.funding * share
      const trade: BacktestTrade = {
        symbol: book.symbol,
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
      }
      this.trades.push(trade)
      book.trades.push(trade)
      if (!whole) {
        before.fees -= entryFees
        before.funding -= funding
      }
    }
    const position = effect.position
    if (position === null) {
      book.open = undefined
    } else if (before === undefined || before.held.side !== position.side) {
      book.open = {
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

/** One symbol's share of a run: its trades, costs, exposure and benchmark. */
const symbolMetrics = (book: Book, barCount: number): SymbolMetrics => {
  const { trades } = book
  const won = trades.reduce((sum, t) => sum + Math.max(t.pnl, 0), 0)
  const lost = trades.reduce((sum, t) => sum - Math.min(t.pnl, 0), 0)
  const first = book.firstOpen, last = book.lastBar?.close
  return {
    symbol: book.symbol,
    total_pnl: trades.reduce((sum, t) => sum + t.pnl, 0),
    total_trades: trades.length,
    win_rate: trades.length === 0 ? 0 : trades.filter((t) => t.pnl > 0).length / trades.length,
    profit_factor: lost > 0 ? won / lost : null,
    average_trade_pnl: trades.length === 0 ? null : trades.reduce((sum, t) => sum + t.pnl, 0) / trades.length,
    exposure_percent: barCount === 0 ? 0 : (book.exposedBars / barCount) * 100,
    buy_and_hold_percent: first === undefined || last === undefined ? null : (last / first - 1) * 100,
    total_fees: book.fees,
    total_funding: book.paidFunding
  }
}

/** A stream of one symbol's candles as windows of `Bars`, one per chunk. */
export const oneSymbol = <E, R>(candles: Stream.Stream<Candle, E, R>): Stream.Stream<Bars, E, R> =>
  Stream.mapChunks(candles, (chunk) => Chunk.of([Chunk.toReadonlyArray(chunk)]))

/**
 * Runs a backtest over windows of bars from any source (oldest first), with each symbol's terms
 * and funding payments, after feeding the program the `warmup` bars before them. The engine steps
 * through each window synchronously; between windows the fiber yields, so a long run neither
 * blocks the server nor ignores interruption.
 */
export const runBacktest = <E, R>(
  settings: BacktestSettings,
  windows: Stream.Stream<Bars, E, R>,
  decider: Decider,
  markets?: ReadonlyArray<MarketTerms>,
  warmup: Bars = []
): Effect.Effect<BacktestResult, E | ProgramRunError, R> =>
  Effect.suspend(() => {
    const engine = new BacktestEngine(settings, markets)
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
      Effect.zipRight(Stream.runForEach(windows, (bars) => step(() => engine.run(bars, decider)))),
      Effect.map(() => engine.finish())
    )
  }).pipe(withRequestSpan("BacktestEngine.run"))
