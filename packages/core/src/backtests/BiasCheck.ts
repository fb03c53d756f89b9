import { Schema } from "effect"
import { defaulted } from "../http/Defaults.js"
import { StoredId } from "../http/IdParam.js"
import { Instant } from "../http/Instant.js"
import { TrimmedText } from "../http/TrimmedText.js"
import { CandleExchange } from "../market/Dataset.js"
import { ProgramParams } from "../programs/Parameters.js"
import { ProgramId } from "../programs/Program.js"
import { candleWindow } from "../sandbox/SandboxLimits.js"
import { Timeframe } from "../venues/Venue.js"
import { backtestDefaults, BacktestFillSchema, BacktestId } from "./Backtest.js"

/** A bias check's id. */
export const BiasCheckId = StoredId.pipe(Schema.brand("BiasCheckId"))
export type BiasCheckId = typeof BiasCheckId.Type

/** The longest run of a bias check, in bars of its timeframe: a check queues five runs, so it stays cheap. */
export const maxBiasCheckBars = 5_000

/** The shortest: its three cuts need bars between them. */
export const minBiasCheckBars = 20

/** Where the lookahead check cuts the range: at these fractions of its bars. */
export const lookaheadCuts = [1 / 4, 1 / 2, 3 / 4] as const

/** The warm-up of the check's reference runs: the whole window, as a live run replays it. */
export const referenceWarmup = candleWindow

/** What a check request leaves out: the backtest's exchange and params, and 200 bars of history at most. */
export const biasCheckDefaults = {
  exchange: backtestDefaults.exchange,
  params: backtestDefaults.params,
  warmup_bars: 200
} as const

/**
 * `POST /api/programs/{id}/checks`: the market, range and `params` the program is checked on, and
 * `warmup_bars`, the history it should need at most (its longest window): the warm-up check runs
 * it with that many bars before `start` and with the whole window.
 */
export const BiasCheckRequest = Schema.Struct({
  symbol: TrimmedText(40),
  exchange: defaulted(CandleExchange, biasCheckDefaults.exchange),
  timeframe: Timeframe,
  start: Instant,
  end: Instant,
  params: defaulted(ProgramParams, biasCheckDefaults.params),
  warmup_bars: defaulted(Schema.Int.pipe(Schema.between(0, referenceWarmup - 1)), biasCheckDefaults.warmup_bars)
}).annotations({
  parseOptions: { errors: "all" },
  examples: [{ symbol: "BTC", timeframe: "1h", start: "2025-01-01T00:00:00Z", end: "2025-03-01T00:00:00Z" }]
})
export type BiasCheckRequest = typeof BiasCheckRequest.Type

/** Where a check is: `queued` until one of its runs starts, `running` until all have ended, then a verdict. */
export const BiasCheckStatus = Schema.Literal("queued", "running", "passed", "failed", "error")
export type BiasCheckStatus = typeof BiasCheckStatus.Type

/** One of the two checks: `pending` until its runs have completed. */
export const BiasVerdict = Schema.Literal("pending", "passed", "failed", "error")
export type BiasVerdict = typeof BiasVerdict.Type

/**
 * The first fill where a run departs from its reference: `expected` is the reference run's fill
 * (null where it has none), `found` the other run's (null where it has none).
 */
export const BiasDifference = Schema.Struct({
  /** The run that departs. */
  backtest_id: BacktestId,
  /** When: the earlier of the two fills' times. */
  time: Schema.String,
  expected: Schema.NullOr(BacktestFillSchema),
  found: Schema.NullOr(BacktestFillSchema),
  /** What differs, in words. */
  detail: Schema.String
})
export type BiasDifference = typeof BiasDifference.Type

/** The lookahead check: the full run, and the runs cut at `cuts`, compared before each cut. */
export const LookaheadCheck = Schema.Struct({
  verdict: BiasVerdict,
  /** The full run's backtest. */
  backtest_id: BacktestId,
  /** The ends of the cut runs, with their backtests. */
  cuts: Schema.Array(Schema.Struct({ end: Schema.String, backtest_id: BacktestId })),
  difference: Schema.NullOr(BiasDifference)
})

/** The warm-up check: the full run (the whole window before `start`) and the run with `warmup_bars`. */
export const WarmupCheck = Schema.Struct({
  verdict: BiasVerdict,
  /** The short warm-up's backtest. */
  backtest_id: BacktestId,
  warmup_bars: Schema.Int,
  /** The full run's warm-up. */
  reference_warmup_bars: Schema.Int,
  difference: Schema.NullOr(BiasDifference)
})

/** One bias check of a program and, once its runs have ended, its verdict. */
export class BiasCheck extends Schema.Class<BiasCheck>("BiasCheck")({
  id: BiasCheckId,
  program_id: ProgramId,
  status: BiasCheckStatus,
  /** Whether the program's code is still the code checked (a check speaks only for the code it ran). */
  current: Schema.Boolean,
  symbol: Schema.String,
  exchange: CandleExchange,
  timeframe: Timeframe,
  start: Schema.String,
  end: Schema.String,
  params: ProgramParams,
  lookahead: LookaheadCheck,
  warmup: WarmupCheck,
  /** Why the check is `error`: a run that failed or was cancelled. */
  error: Schema.NullOr(Schema.String),
  created_at: Schema.String
}) {}

/** `GET /api/programs/{id}/checks`: the program's checks, newest first. */
export class BiasCheckList extends Schema.Class<BiasCheckList>("BiasCheckList")({
  checks: Schema.Array(BiasCheck)
}) {}
