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

/** The largest fall from a running peak of equity (a fraction of that peak) and the most bars spent below a peak. */
export const drawdowns = (equities: ReadonlyArray<number>) => {
  let peak = -Infinity
  let worst = 0
  let below = 0
  let longest = 0
  for (const equity of equities) {
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
export const returnsOf = (initial: number, equities: ReadonlyArray<number>) =>
  equities.map((equity, i) => {
    const previous = i === 0 ? initial : equities[i - 1]!
    return previous > 0 ? equity / previous - 1 : 0
  })

const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / xs.length

/**
 * Annualised ratio of the mean return to a deviation, with a zero risk-free rate: the standard
 * deviation (Sharpe), or the downside deviation, the root mean square of the returns below zero
 * (Sortino). 0 when there is no risk to measure.
 */
export const annualisedRatio = (returns: ReadonlyArray<number>, barsPerYear: number, downside: boolean): number => {
  if (returns.length < 2) return 0
  const m = mean(returns)
  const risk = downside
    ? Math.sqrt(returns.reduce((a, r) => a + Math.min(r, 0) ** 2, 0) / returns.length)
    : Math.sqrt(returns.reduce((a, r) => a + (r - m) ** 2, 0) / (returns.length - 1))
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
  const { longest, worst } = drawdowns([initial, ...equities])
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
