/**
 * The terms everything trades on unless told otherwise: a paper account's and a backtest's
 * starting balance, the fee per fill that takes liquidity and per resting order filled (fractions
 * of the fill's notional), the adverse price move on market and stop fills (a fraction of the
 * price), and the leverage of an entry that names none.
 * The simulated venue, the backtest engine and request, and new accounts all read these.
 */
export const tradingDefaults = {
  initialBalance: 10_000,
  feeRate: 0.00035,
  makerFeeRate: 0.0001,
  slippage: 0.0005,
  leverage: 1
} as const
