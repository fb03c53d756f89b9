import type { BacktestMetrics, BacktestSettings, BacktestTrade } from "./Backtest.js"

/** Largest fall from a running peak of equity, in percent of that peak. */
const maxDrawdownPercent = (equities: ReadonlyArray<number>): number => {
  let peak = -Infinity
  let worst = 0
  for (const equity of equities) {
    peak = Math.max(peak, equity)
    if (peak > 0) worst = Math.max(worst, (peak - equity) / peak)
  }
  return worst * 100
}

/** Annualised Sharpe ratio of the per-bar returns, with a zero risk-free rate; 0 when returns never vary. */
const sharpe = (initial: number, equities: ReadonlyArray<number>, barsPerYear: number): number => {
  const returns = equities.map((equity, i) => {
    const previous = i === 0 ? initial : equities[i - 1]!
    return previous > 0 ? equity / previous - 1 : 0
  })
  if (returns.length < 2) return 0
  const mean = returns.reduce((a, b) => a + b, 0) / returns.length
  const variance = returns.reduce((a, r) => a + (r - mean) ** 2, 0) / (returns.length - 1)
  return variance > 0 ? (mean / Math.sqrt(variance)) * Math.sqrt(barsPerYear) : 0
}

export const computeMetrics = (
  settings: BacktestSettings,
  equities: ReadonlyArray<number>,
  trades: ReadonlyArray<BacktestTrade>
): BacktestMetrics => {
  const initial = settings.initialBalance
  const final = equities.length === 0 ? initial : equities[equities.length - 1]!
  const profit = trades.reduce((sum, t) => sum + Math.max(t.pnl, 0), 0)
  const loss = trades.reduce((sum, t) => sum - Math.min(t.pnl, 0), 0)
  return {
    total_pnl: final - initial,
    total_pnl_percent: ((final - initial) / initial) * 100,
    total_trades: trades.length,
    win_rate: trades.length === 0 ? 0 : trades.filter((t) => t.pnl > 0).length / trades.length,
    max_drawdown_percent: maxDrawdownPercent([initial, ...equities]),
    sharpe: sharpe(initial, equities, settings.barsPerYear),
    profit_factor: loss > 0 ? profit / loss : null
  }
}
