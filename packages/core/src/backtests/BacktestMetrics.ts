import type { BacktestMetrics, BacktestSettings, BacktestTrade } from "./Backtest.js"

/** What the engine counts besides the curve and the trades. */
export interface RunTotals {
  readonly fees: number
  readonly funding: number
  /** Bars that closed with a position open. */
  readonly exposedBars: number
  /** Holding the traded symbols (equally weighted) from the first open to the last close; null without bars. */
  readonly buyAndHoldPercent: number | null
}

// A run's curve has a point per bar (half a million and more): index loops over it, not iterators,
// `reduce` or copies, which box a number per point.

/** The largest fall from a running peak of equity (a fraction of that peak) and the most bars spent below a peak. */
export const drawdowns = (equities: ArrayLike<number>) => {
  let peak = -Infinity
  let worst = 0
  let below = 0
  let longest = 0
  for (let i = 0; i < equities.length; i++) {
    const equity = equities[i]!
    if (equity >= peak) {
      peak = equity
      below = 0
    } else {
      longest = Math.max(longest, ++below)
    }
    if (peak > 0) worst = Math.max(worst, (peak - equity) / peak)
  }
  return { worst, longest }
}

/** Per-bar returns of the curve, the first against the initial balance. */
export const returnsOf = (initial: number, equities: ReadonlyArray<number>): Array<number> => {
  const returns: Array<number> = []
  let previous = initial
  for (let i = 0; i < equities.length; i++) {
    const equity = equities[i]!
    returns.push(previous > 0 ? equity / previous - 1 : 0)
    previous = equity
  }
  return returns
}

const mean = (xs: ArrayLike<number>) => {
  let sum = 0
  for (let i = 0; i < xs.length; i++) sum += xs[i]!
  return sum / xs.length
}

/**
 * Annualised ratio of the mean return to a deviation, with a zero risk-free rate: the standard
 * deviation (Sharpe), or the downside deviation, the root mean square of the returns below zero
 * (Sortino). 0 when there is no risk to measure.
 */
export const annualisedRatio = (returns: ArrayLike<number>, barsPerYear: number, downside: boolean): number => {
  if (returns.length < 2) return 0
  const m = mean(returns)
  let squares = 0
  for (let i = 0; i < returns.length; i++) squares += downside ? Math.min(returns[i]!, 0) ** 2 : (returns[i]! - m) ** 2
  const risk = Math.sqrt(squares / (downside ? returns.length : returns.length - 1))
  return risk > 0 ? (m / risk) * Math.sqrt(barsPerYear) : 0
}

export const computeMetrics = (
  settings: BacktestSettings,
  equities: ReadonlyArray<number>,
  trades: ReadonlyArray<BacktestTrade>,
  totals: RunTotals
): BacktestMetrics => {
  const initial = settings.initialBalance
  const final = equities.length === 0 ? initial : equities[equities.length - 1]!
  const profit = trades.reduce((sum, t) => sum + Math.max(t.pnl, 0), 0)
  const loss = trades.reduce((sum, t) => sum - Math.min(t.pnl, 0), 0)
  const returns = returnsOf(initial, equities)
  const path = new Float64Array(equities.length + 1)
  path[0] = initial
  path.set(equities, 1)
  const { longest, worst } = drawdowns(path)
  const years = equities.length / settings.barsPerYear
  const annualReturn = years > 0 && final > 0 ? (final / initial) ** (1 / years) - 1 : -1
  return {
    total_pnl: final - initial,
    total_pnl_percent: ((final - initial) / initial) * 100,
    total_trades: trades.length,
    win_rate: trades.length === 0 ? 0 : trades.filter((t) => t.pnl > 0).length / trades.length,
    max_drawdown_percent: worst * 100,
    sharpe: annualisedRatio(returns, settings.barsPerYear, false),
    profit_factor: loss > 0 ? profit / loss : null,
    sortino: annualisedRatio(returns, settings.barsPerYear, true),
    calmar: worst > 0 ? annualReturn / worst : null,
    exposure_percent: equities.length === 0 ? 0 : (totals.exposedBars / equities.length) * 100,
    average_trade_pnl: trades.length === 0 ? null : trades.reduce((sum, t) => sum + t.pnl, 0) / trades.length,
    longest_drawdown_bars: longest,
    buy_and_hold_percent: totals.buyAndHoldPercent,
    total_fees: totals.fees,
    total_funding: totals.funding
  }
}
