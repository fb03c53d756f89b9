import { Schema } from "effect"
import { AccountId, MarginMode } from "../accounts/Account.js"
import { tradingDefaults } from "../accounts/TradingDefaults.js"
import { PositiveAmount } from "../http/Amount.js"
import { defaulted } from "../http/Defaults.js"
import { idParam, StoredId } from "../http/IdParam.js"
import { Instant } from "../http/Instant.js"
import { Pagination } from "../http/Pagination.js"
import { TrimmedText } from "../http/TrimmedText.js"
import { JobStatus } from "../jobs/JobStatus.js"
import { CandleExchange } from "../market/Dataset.js"
import { ProgramParams } from "../programs/Parameters.js"
import { ProgramId } from "../programs/Program.js"
import { candleWindow } from "../sandbox/SandboxLimits.js"
import { paperTerms, type TradingTerms, unlistedRules } from "../trading/Fills.js"
import { defaultMarginTables } from "../venues/MarginTiers.js"
import { type Exchange, LongerTimeframes, Timeframe, timeframeMillis } from "../venues/Venue.js"

/** The longest backtest (or optimisation), in bars of its timeframe: a leap year of one-minute bars. */
export const maxBacktestBars = 527_040

/** A backtest's id. */
export const BacktestId = StoredId.pipe(Schema.brand("BacktestId"))
export type BacktestId = typeof BacktestId.Type

/** Where a backtest job is: `queued` until a worker claims it, then `running`, then one of the final three. */
export const BacktestStatus = JobStatus
export type BacktestStatus = JobStatus

const Fraction = Schema.Number.pipe(Schema.finite(), Schema.between(0, 0.1))

/** When a decision fills: at the next bar's open (what a live run can do), or at the close it was decided on (optimistic). */
export const FillTiming = Schema.Literal("next_open", "close")
export type FillTiming = typeof FillTiming.Type

/** `fixed`: the slippage fraction on every market fill; `volume`: plus an impact growing with the order's share of the bar's volume. */
export const SlippageModel = Schema.Literal("fixed", "volume")

/** What a backtest request leaves out: DESIGN's fees and slippage (fractions of notional), 10000 to start with. */
export const backtestDefaults = {
  exchange: "venue1",
  initial_balance: tradingDefaults.initialBalance,
  fee_rate: tradingDefaults.feeRate,
  maker_fee_rate: tradingDefaults.makerFeeRate,
  slippage: tradingDefaults.slippage,
  slippage_model: "fixed",
  fill_timing: "next_open",
  margin_mode: "isolated",
  leverage: tradingDefaults.leverage,
  // The window a program sees, as a live run replays it before each decision.
  warmup_bars: candleWindow,
  params: {}
} as const

/** The most symbols one backtest trades from its balance. */
export const maxBacktestSymbols = 10

const SymbolName = TrimmedText(40)

/**
 * `POST /api/programs/{id}/backtest`; the service fills in `backtestDefaults`. A run trades
 * `symbol`, or every one of `symbols` from one balance (the program sees them all and names the
 * symbol of each decision): one of the two, which the service checks; `timeframes` are longer
 * timeframes the program reads besides its own.
 */
export const BacktestRequest = Schema.Struct({
  symbol: Schema.optional(SymbolName),
  symbols: Schema.optional(
    Schema.Array(SymbolName).pipe(
      Schema.minItems(1),
      Schema.maxItems(maxBacktestSymbols),
      Schema.filter((list) => new Set(list).size === list.length || "must not repeat a symbol")
    )
  ),
  exchange: defaulted(CandleExchange, backtestDefaults.exchange),
  timeframe: Timeframe,
  timeframes: Schema.optional(LongerTimeframes),
  start: Instant,
  end: Instant,
  initial_balance: defaulted(PositiveAmount, backtestDefaults.initial_balance),
  fee_rate: defaulted(Fraction, backtestDefaults.fee_rate),
  maker_fee_rate: defaulted(Fraction, backtestDefaults.maker_fee_rate),
  slippage: defaulted(Fraction, backtestDefaults.slippage),
  slippage_model: defaulted(SlippageModel, backtestDefaults.slippage_model),
  fill_timing: defaulted(FillTiming, backtestDefaults.fill_timing),
  margin_mode: defaulted(MarginMode, backtestDefaults.margin_mode),
  leverage: defaulted(Schema.Number.pipe(Schema.between(1, 125)), backtestDefaults.leverage),
  /** Bars before `start` fed to the program without trading, so its window and its state are full at `start`. */
  warmup_bars: defaulted(Schema.Int.pipe(Schema.between(0, candleWindow)), backtestDefaults.warmup_bars),
  /** `data.params`: checked against the program's declared parameters, the omitted ones taking their default. */
  params: defaulted(ProgramParams, backtestDefaults.params),
  account_id: Schema.optionalWith(AccountId, { nullable: true })
}).annotations({
  parseOptions: { errors: "all" },
  examples: [
    { symbol: "BTC", timeframe: "1h", start: "2025-01-01T00:00:00Z", end: "2025-02-01T00:00:00Z" },
    {
      symbols: ["BTC", "ETH"],
      timeframe: "1h",
      timeframes: ["4h"],
      start: "2025-01-01T00:00:00Z",
      end: "2025-02-01T00:00:00Z"
    }
  ]
})
export type BacktestRequest = typeof BacktestRequest.Type

// Measured since the rulebook: null in the results of backtests that ran before.
const later = Schema.optionalWith(Schema.NullOr(Schema.Number), { default: () => null })

/** A backtest's metrics; `win_rate` is a fraction 0..1, `profit_factor` null without a losing trade. */
export const BacktestMetricsSchema = Schema.Struct({
  total_pnl: Schema.Number,
  total_pnl_percent: Schema.Number,
  total_trades: Schema.Int,
  win_rate: Schema.Number,
  max_drawdown_percent: Schema.Number,
  sharpe: Schema.Number,
  profit_factor: Schema.NullOr(Schema.Number),
  /** Like `sharpe`, with only the returns below zero as the risk. */
  sortino: later,
  /** The annualised return over the largest drawdown (both as fractions); null without a drawdown. */
  calmar: later,
  /** The share of bars with a position open, in percent. */
  exposure_percent: later,
  /** The mean `pnl` of a trade; null without trades. */
  average_trade_pnl: later,
  /** The most bars the equity spent below an earlier peak. */
  longest_drawdown_bars: later,
  /** Holding the symbol (the symbols, equally weighted) from the first open to the last close, in percent: the benchmark. */
  buy_and_hold_percent: later,
  /** Every fee paid, liquidation fees included. */
  total_fees: later,
  /** Funding received less funding paid. */
  total_funding: later
})

export type BacktestMetrics = typeof BacktestMetricsSchema.Type

/** The equity at a bar's close, after that bar's fills. */
export const EquityPointSchema = Schema.Struct({ time: Schema.Number, equity: Schema.Number })
export type EquityPoint = typeof EquityPointSchema.Type

/** Why a position closed. */
export const ExitReason = Schema.Literal("signal", "reversal", "take_profit", "stop_loss", "liquidation", "end_of_data")
export type ExitReason = typeof ExitReason.Type

/** A closed position; `pnl` is net of the entry and exit fees and of its funding. */
export const BacktestTradeSchema = Schema.Struct({
  symbol: Schema.String,
  side: Schema.Literal("long", "short"),
  size: Schema.Number,
  entry_time: Schema.Number,
  entry_price: Schema.Number,
  exit_time: Schema.Number,
  exit_price: Schema.Number,
  fee: Schema.Number,
  /** Funding received less paid while it was open. */
  funding: Schema.optionalWith(Schema.Number, { default: () => 0 }),
  pnl: Schema.Number,
  exit_reason: ExitReason
})
export type BacktestTrade = typeof BacktestTradeSchema.Type

/** One fill: an order the program's decision or a protective exit placed, as a paper account's order list shows it. */
export const BacktestFillSchema = Schema.Struct({
  symbol: Schema.String,
  time: Schema.Number,
  side: Schema.Literal("buy", "sell"),
  quantity: Schema.Number,
  price: Schema.Number,
  fee: Schema.Number,
  /** What placed it: `signal` (a decision), `reversal` (a decision that closed the other side first) or the exit's reason. */
  reason: ExitReason
})
export type BacktestFill = typeof BacktestFillSchema.Type

/** One symbol's share of a backtest: its trades and costs, the bars it was held, and holding it as the benchmark. */
export const SymbolMetricsSchema = Schema.Struct({
  symbol: Schema.String,
  /** The sum of its trades' `pnl` (fees and funding included). */
  total_pnl: Schema.Number,
  total_trades: Schema.Int,
  win_rate: Schema.Number,
  profit_factor: Schema.NullOr(Schema.Number),
  average_trade_pnl: Schema.NullOr(Schema.Number),
  exposure_percent: Schema.Number,
  buy_and_hold_percent: Schema.NullOr(Schema.Number),
  total_fees: Schema.Number,
  total_funding: Schema.Number
})
export type SymbolMetrics = typeof SymbolMetricsSchema.Type

/** What a completed run stores: the engine's result with the curve downsampled. */
export const BacktestOutcome = Schema.Struct({
  metrics: BacktestMetricsSchema,
  // Kept since portfolios; earlier results have none.
  per_symbol: Schema.optionalWith(Schema.Array(SymbolMetricsSchema), { default: () => [] }),
  final_balance: Schema.Number,
  equity_curve: Schema.Array(EquityPointSchema),
  trades: Schema.Array(BacktestTradeSchema),
  // Kept since the rulebook; earlier results have none.
  fills: Schema.optionalWith(Schema.Array(BacktestFillSchema), { default: () => [] }),
  /** The bars before `start` the program was fed: `warmup_bars`, or fewer where the data begins later. */
  warmed_up_bars: Schema.optionalWith(Schema.Int, { default: () => 0 })
})
export type BacktestOutcome = typeof BacktestOutcome.Type

/** What the engine answers for a finished run: the outcome before its curve is downsampled. */
export type BacktestResult = BacktestOutcome

/** How a backtest fills and measures: the rulebook's terms and the run's own; `defaultSettings` gives `tradingDefaults`. */
export interface BacktestSettings extends TradingTerms {
  readonly initialBalance: number
  /** Leverage of an entry whose decision names none. */
  readonly leverage: number
  readonly fillTiming: FillTiming
  readonly marginMode: MarginMode
  /** The length of a bar, for the funding payments due inside one. */
  readonly barMillis: number
  /** Bars per year of the timeframe, to annualise the Sharpe ratio. */
  readonly barsPerYear: number
}

const millisPerYear = 365 * 24 * 3600 * 1000

export const defaultSettings = (timeframe: Timeframe, exchange: Exchange = "venue1"): BacktestSettings => ({
  ...paperTerms(unlistedRules("*", defaultMarginTables[exchange])),
  initialBalance: tradingDefaults.initialBalance,
  leverage: tradingDefaults.leverage,
  fillTiming: "next_open",
  marginMode: "isolated",
  barMillis: timeframeMillis[timeframe],
  barsPerYear: millisPerYear / timeframeMillis[timeframe]
})

const entryFields = {
  id: BacktestId,
  status: BacktestStatus,
  account_id: Schema.NullOr(AccountId),
  program_id: Schema.NullOr(ProgramId),
  /** The first of `symbols`. */
  symbol: Schema.String,
  /** Every symbol the run trades from its balance. */
  symbols: Schema.Array(Schema.String),
  exchange: CandleExchange,
  timeframe: Timeframe,
  /** The longer timeframes its program reads. */
  timeframes: Schema.Array(Timeframe),
  /** What the program was given as `data.params`, with its declared defaults filled in. */
  params: ProgramParams,
  created_at: Schema.String,
  started_at: Schema.NullOr(Schema.String),
  finished_at: Schema.NullOr(Schema.String),
  total_pnl: Schema.NullOr(Schema.Number),
  total_trades: Schema.NullOr(Schema.Int),
  win_rate: Schema.NullOr(Schema.Number)
}

/** A backtest as history lists it, with the market it ran on. */
export class BacktestEntry extends Schema.Class<BacktestEntry>("BacktestEntry")(entryFields) {}

/** One backtest: its request, where the job is (`progress` 0..1, `error` when it failed or waits for another attempt) and, once completed, its result. */
export class Backtest extends Schema.Class<Backtest>("Backtest")({
  ...entryFields,
  start: Schema.String,
  end: Schema.String,
  initial_balance: Schema.Number,
  fee_rate: Schema.Number,
  maker_fee_rate: Schema.Number,
  slippage: Schema.Number,
  slippage_model: SlippageModel,
  fill_timing: FillTiming,
  margin_mode: MarginMode,
  leverage: Schema.Number,
  warmup_bars: Schema.Int,
  /** Null until the run completes. */
  warmed_up_bars: Schema.NullOr(Schema.Int),
  progress: Schema.Number,
  attempts: Schema.Int,
  error: Schema.NullOr(Schema.String),
  metrics: Schema.NullOr(BacktestMetricsSchema),
  /** Each symbol's share, once the run completes. */
  per_symbol: Schema.Array(SymbolMetricsSchema),
  final_balance: Schema.NullOr(Schema.Number),
  equity_curve: Schema.Array(EquityPointSchema),
  trades: Schema.Array(BacktestTradeSchema),
  fills: Schema.Array(BacktestFillSchema)
}) {}

/** `GET /api/programs/backtest/history` filters, with pagination. */
export const BacktestHistoryParams = Schema.Struct({
  program_id: Schema.optional(idParam(ProgramId)),
  account_id: Schema.optional(idParam(AccountId)),
  status: Schema.optional(BacktestStatus),
  ...Pagination.fields
}).annotations({ parseOptions: { errors: "all" } })
export type BacktestHistoryParams = typeof BacktestHistoryParams.Type

/** `GET /api/programs/backtest/history`: the caller's backtests, newest first. */
export class BacktestHistory extends Schema.Class<BacktestHistory>("BacktestHistory")({
  backtests: Schema.Array(BacktestEntry)
}) {}

/** `GET /api/programs/backtest/{id}/trades`: one page of a backtest's trades, in the order they closed. */
export class BacktestTrades extends Schema.Class<BacktestTrades>("BacktestTrades")({
  trades: Schema.Array(BacktestTradeSchema),
  /** Every trade of the backtest, on all pages; 0 until it completes. */
  total: Schema.Int
}) {}
