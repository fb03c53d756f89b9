import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Schema } from "effect"
import { AccountId, MarginMode } from "../accounts/Account.js"
import { makeJobQueue } from "../jobs/JobQueue.js"
import { CandleExchange } from "../market/Dataset.js"
import { ProgramParams } from "../programs/Parameters.js"
import { ProgramId } from "../programs/Program.js"
import { columnsOf, IsoTimestamp } from "../sql/Columns.js"
import { UserId } from "../users/User.js"
import { Timeframe } from "../venues/Venue.js"
import { BacktestId, BacktestOutcome, BacktestStatus, FillTiming, SlippageModel } from "./Backtest.js"

const Numeric = Schema.NumberFromString

export const BacktestRow = Schema.Struct({
  id: BacktestId,
  user_id: UserId,
  program_id: Schema.NullOr(ProgramId),
  account_id: Schema.NullOr(AccountId),
  symbol: Schema.String,
  symbols: Schema.parseJson(Schema.Array(Schema.String)),
  exchange: CandleExchange,
  timeframe: Timeframe,
  timeframes: Schema.parseJson(Schema.Array(Timeframe)),
  start_at: IsoTimestamp,
  end_at: IsoTimestamp,
  initial_balance: Numeric,
  fee_rate: Schema.Number,
  maker_fee_rate: Schema.Number,
  slippage: Schema.Number,
  slippage_model: SlippageModel,
  fill_timing: FillTiming,
  margin_mode: MarginMode,
  leverage: Schema.Number,
  warmup_bars: Schema.Int,
  params: Schema.parseJson(ProgramParams),
  code: Schema.String,
  status: BacktestStatus,
  progress: Schema.Number,
  attempts: Schema.Int,
  lease_until: Schema.NullOr(IsoTimestamp),
  claimed_by: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String),
  result: Schema.NullOr(Schema.parseJson(BacktestOutcome)),
  total_pnl: Schema.NullOr(Numeric),
  total_trades: Schema.NullOr(Schema.Int),
  winning_trades: Schema.NullOr(Schema.Int),
  created_at: IsoTimestamp,
  started_at: Schema.NullOr(IsoTimestamp),
  finished_at: Schema.NullOr(IsoTimestamp)
})
export type BacktestRow = typeof BacktestRow.Type

/** A backtest as history lists it: the job and its summary columns, not its code or result. */
export const BacktestEntryRow = BacktestRow.pick(
  "id",
  "program_id",
  "account_id",
  "symbol",
  "symbols",
  "exchange",
  "timeframe",
  "timeframes",
  "params",
  "status",
  "created_at",
  "started_at",
  "finished_at",
  "total_pnl",
  "total_trades",
  "winning_trades"
)
export type BacktestEntryRow = typeof BacktestEntryRow.Type

/** A backtest as its reads answer it: not the code the job runs (a program's source, up to 200,000 characters). */
export const BacktestViewRow = BacktestRow.omit("code")
export type BacktestViewRow = typeof BacktestViewRow.Type

const NewBacktest = Schema.Struct({
  user_id: UserId,
  program_id: ProgramId,
  account_id: Schema.NullOr(AccountId),
  symbol: Schema.String,
  symbols: Schema.parseJson(Schema.Array(Schema.String)),
  exchange: CandleExchange,
  timeframe: Timeframe,
  timeframes: Schema.parseJson(Schema.Array(Timeframe)),
  start_at: Schema.DateFromSelf,
  end_at: Schema.DateFromSelf,
  initial_balance: Schema.Number,
  fee_rate: Schema.Number,
  maker_fee_rate: Schema.Number,
  slippage: Schema.Number,
  slippage_model: SlippageModel,
  fill_timing: FillTiming,
  margin_mode: MarginMode,
  leverage: Schema.Number,
  warmup_bars: Schema.Int,
  params: Schema.parseJson(ProgramParams),
  code: Schema.String,
  now: Schema.DateFromSelf
})

/** Backtests as jobs: the completed ones keep a summary beside the result, for history without the result. */
export const backtestJobs = {
  table: "backtests",
  Row: BacktestRow,
  Result: BacktestOutcome,
  summary: ({ metrics, trades }: BacktestOutcome) => ({
    total_pnl: metrics.total_pnl,
    total_trades: metrics.total_trades,
    winning_trades: trades.filter((t) => t.pnl > 0).length
  })
}

const HistoryQuery = Schema.Struct({
  user_id: UserId,
  program_id: Schema.optional(ProgramId),
  account_id: Schema.optional(AccountId),
  status: Schema.optional(BacktestStatus),
  limit: Schema.Int,
  offset: Schema.Int
})

/** SQL for backtests; `jobs` claims, renews and ends them (the only place a job changes hands). */
export class BacktestsRepo extends Effect.Service<BacktestsRepo>()("@trading-platform/core/BacktestsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = SqlSchema.single({
      Request: NewBacktest,
      Result: BacktestRow,
      execute: (b) =>
        sql`
        INSERT INTO backtests (user_id, program_id, account_id, symbol, symbols, exchange, timeframe, timeframes,
          start_at, end_at, initial_balance, fee_rate, maker_fee_rate, slippage, slippage_model, fill_timing,
          margin_mode, leverage, warmup_bars, params, code, status, created_at)
        VALUES (${b.user_id}, ${b.program_id}, ${b.account_id}, ${b.symbol}, ${b.symbols}, ${b.exchange}, ${b.timeframe},
          ${b.timeframes}, ${b.start_at}, ${b.end_at}, ${b.initial_balance}, ${b.fee_rate}, ${b.maker_fee_rate}, ${b.slippage},
          ${b.slippage_model}, ${b.fill_timing}, ${b.margin_mode}, ${b.leverage}, ${b.warmup_bars}, ${b.params}, ${b.code}, 'queued',
          ${b.now})
        RETURNING *`
    })

    const findById = SqlSchema.findOne({
      Request: BacktestId,
      Result: BacktestViewRow,
      execute: (id) => sql`SELECT ${columnsOf(sql, BacktestViewRow)} FROM backtests WHERE id = ${id}`
    })

    // Whose it is, for a request that only checks that (a cancel): the row holds the code and the result.
    const owner = SqlSchema.findOne({
      Request: BacktestId,
      Result: Schema.Struct({ user_id: UserId }),
      execute: (id) => sql`SELECT user_id FROM backtests WHERE id = ${id}`
    })

    // Where runs are, for a caller that reads their results only once all have completed (a bias check's).
    const states = SqlSchema.findAll({
      Request: Schema.Array(BacktestId),
      Result: BacktestRow.pick("id", "status", "error"),
      execute: (ids) => sql`SELECT id, status, error FROM backtests WHERE ${sql.in("id", ids)}`
    })

    // A result's trades, each left encoded: the caller decodes only the page it answers. A long run's result is
    // megabytes, and decoding all of it (curve, fills, every trade) cost most of the read. Cutting the page out in
    // SQL was slower still: PGlite and PostgreSQL parse the document's JSON several times slower than JSON.parse.
    const tradesOf = SqlSchema.findOne({
      Request: BacktestId,
      Result: Schema.Struct({
        user_id: UserId,
        result: Schema.NullOr(Schema.parseJson(Schema.Struct({ trades: Schema.Array(Schema.Unknown) })))
      }),
      execute: (id) => sql`SELECT user_id, result FROM backtests WHERE id = ${id}`
    })

    // Only the summary: a result (trades, equity curve) can be megabytes, and history lists a hundred.
    const history = SqlSchema.findAll({
      Request: HistoryQuery,
      Result: BacktestEntryRow,
      execute: (q) =>
        sql`
          SELECT id, program_id, account_id, symbol, symbols, exchange, timeframe, timeframes, params, status, created_at,
            started_at, finished_at, total_pnl, total_trades, winning_trades
          FROM backtests WHERE ${
          sql.and([
            sql`user_id = ${q.user_id}`,
            ...(q.program_id === undefined ? [] : [sql`program_id = ${q.program_id}`]),
            ...(q.account_id === undefined ? [] : [sql`account_id = ${q.account_id}`]),
            ...(q.status === undefined ? [] : [sql`status = ${q.status}`])
          ])
        }
          ORDER BY created_at DESC, id DESC LIMIT ${q.limit} OFFSET ${q.offset}`
    })

    /** Deletes the backtests that finished before `before`; queued and running ones stay. */
    const purgeFinished = (before: Date) =>
      sql`DELETE FROM backtests WHERE status IN ('completed', 'failed', 'cancelled') AND finished_at < ${before}`.pipe(
        Effect.asVoid
      )

    return {
      insert,
      findById,
      owner,
      states,
      tradesOf,
      history,
      purgeFinished,
      jobs: yield* makeJobQueue(backtestJobs)
    } as const
  })
}) {}
