import { Clock, Effect, Schema } from "effect"
import type { NonEmptyReadonlyArray } from "effect/Array"
import { Accounts } from "../accounts/Accounts.js"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { LeverageTooHigh, NoMarketData } from "../http/Errors.js"
import { invalidField } from "../http/InvalidField.js"
import { pageOf, type Pagination } from "../http/Pagination.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { cancelUnfinished } from "../jobs/JobQueue.js"
import { JobWakeup } from "../jobs/JobWakeup.js"
import { MarketData, venueOf } from "../market/MarketData.js"
import { resolveParameters } from "../programs/Parameters.js"
import type { ProgramId } from "../programs/Program.js"
import { Programs } from "../programs/Programs.js"
import type { ProgramRow } from "../programs/Programs.js"
import { compileProgram } from "../sandbox/ProgramSource.js"
import { fromDecodedRow } from "../sql/Columns.js"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import { now } from "../time/Now.js"
import type { CurrentUserShape } from "../users/Authentication.js"
import { ownedBy } from "../users/Ownership.js"
import { longerTimeframeIssue, timeframeMillis } from "../venues/Venue.js"
import {
  Backtest,
  backtestDefaults,
  BacktestEntry,
  BacktestHistory,
  type BacktestHistoryParams,
  type BacktestId,
  type BacktestRequest,
  BacktestTrades,
  BacktestTradeSchema,
  maxBacktestBars
} from "./Backtest.js"
import { type BacktestEntryRow, backtestJobs, BacktestsRepo, BacktestViewRow } from "./BacktestsRepo.js"

const decodeTrades = Schema.decodeUnknown(Schema.Array(BacktestTradeSchema))

const toEntry = (row: BacktestEntryRow) =>
  new BacktestEntry({
    id: row.id,
    status: row.status,
    account_id: row.account_id,
    program_id: row.program_id,
    symbol: row.symbol,
    symbols: row.symbols,
    exchange: row.exchange,
    timeframe: row.timeframe,
    timeframes: row.timeframes,
    params: row.params,
    created_at: row.created_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
    total_pnl: row.total_pnl,
    total_trades: row.total_trades,
    // The metrics' win rate from the summary columns (trades with pnl > 0 over all), as history reads no result.
    win_rate: row.total_trades === null
      ? null
      : row.total_trades === 0
      ? 0
      : (row.winning_trades ?? 0) / row.total_trades
  }, fromDecodedRow)

const toBacktest = (row: BacktestViewRow) =>
  new Backtest({
    ...toEntry(row),
    start: row.start_at,
    end: row.end_at,
    initial_balance: row.initial_balance,
    fee_rate: row.fee_rate,
    maker_fee_rate: row.maker_fee_rate,
    slippage: row.slippage,
    slippage_model: row.slippage_model,
    fill_timing: row.fill_timing,
    margin_mode: row.margin_mode,
    leverage: row.leverage,
    warmup_bars: row.warmup_bars,
    warmed_up_bars: row.result?.warmed_up_bars ?? null,
    progress: row.progress,
    attempts: row.attempts,
    error: row.error,
    metrics: row.result?.metrics ?? null,
    per_symbol: row.result?.per_symbol ?? [],
    final_balance: row.result?.final_balance ?? null,
    equity_curve: row.result?.equity_curve ?? [],
    trades: row.result?.trades ?? [],
    fills: row.result?.fills ?? []
  }, fromDecodedRow)

/**
 * A backtest's range as epoch milliseconds, once it is ordered (400 naming `end`), at most
 * `maxBars` bars of the timeframe long, and starts before the last closed candle (422
 * `no_market_data`).
 */
export const backtestRange = (
  input: Pick<BacktestRequest, "start" | "end" | "timeframe">,
  maxBars = maxBacktestBars
) =>
  Effect.gen(function*() {
    const start = Date.parse(input.start)
    const end = Date.parse(input.end)
    if (!(start < end)) return yield* invalidField("end", "must be after start")
    if ((end - start) / timeframeMillis[input.timeframe] > maxBars) {
      return yield* invalidField("end", `must be at most ${maxBars} bars of the timeframe after start`)
    }
    // A range with no closed candle would run to "completed" with nothing in it.
    const step = timeframeMillis[input.timeframe]
    const nowMs = yield* Clock.currentTimeMillis
    if (Math.ceil(start / step) * step + step > nowMs) {
      const until = new Date(Math.floor(nowMs / step) * step).toISOString()
      return yield* new NoMarketData({
        error:
          `No ${input.timeframe} candles from ${input.start}: they exist up to ${until}; start the backtest before that`,
        available_until: until
      })
    }
    return { start, end }
  })

/** Backtests as durable jobs: the rules of a request, ownership, history and cancellation. */
export class Backtests extends Effect.Service<Backtests>()("@trading-platform/core/Backtests", {
  effect: Effect.gen(function*() {
    const repo = yield* BacktestsRepo
    const { maxQueuedJobsPerUser } = yield* PlatformConfig
    const programs = yield* Programs
    const accounts = yield* Accounts
    const market = yield* MarketData
    const wakeup = yield* JobWakeup

    /** The caller's backtest, or 404 when it does not exist and 403 when it is another user's. */
    const owned = (caller: CurrentUserShape, id: BacktestId) =>
      repo.findById(id).pipe(ownedBy(caller, `Backtest ${id}`))

    /**
     * The symbols the run trades (`symbol`, or `symbols`: one of the two), once its longer
     * timeframes are whole multiples of its own.
     */
    const marketsOf = (input: BacktestRequest) =>
      Effect.gen(function*() {
        if ((input.symbol === undefined) === (input.symbols === undefined)) {
          return yield* invalidField("symbol", "or symbols (a list) is required, and not both")
        }
        const issue = longerTimeframeIssue(input.timeframe, input.timeframes ?? [])
        if (issue !== undefined) return yield* invalidField(issue.path, issue.message)
        return input.symbols ?? [input.symbol!]
      })

    /**
     * The rows of backtests of one program, once every request passes the rules of a submission;
     * the program is read and compiled once, so all of them run the same code. Optimisations
     * check their data and settings with it too.
     */
    const prepare = (
      caller: CurrentUserShape,
      programId: ProgramId,
      requests: NonEmptyReadonlyArray<BacktestRequest>
    ) =>
      Effect.gen(function*() {
        const checked = yield* Effect.forEach(requests, (request) =>
          Effect.gen(function*() {
            const input = { ...backtestDefaults, ...request }
            const symbols = yield* marketsOf(input)
            return { input, symbols, range: yield* backtestRange(input) }
          }))
        const program = yield* programs.owned(caller, programId)
        // The job keeps the code as it is now: editing or deleting the program later does not change the run.
        const code = yield* compileProgram(program.code, program.language)
        const rows = yield* Effect.forEach(checked, ({ input, range: { end, start }, symbols }) =>
          Effect.gen(function*() {
            if (input.account_id !== undefined) {
              const account = yield* accounts.owned(caller, input.account_id)
              if (account.max_leverage !== null && input.leverage > account.max_leverage) {
                return yield* new LeverageTooHigh({
                  error: `Leverage ${input.leverage} is above the account's max_leverage ${account.max_leverage}`
                })
              }
            }
            const source = yield* market.source(caller, input.exchange)
            for (const symbol of symbols) {
              yield* market.check(source, symbol, input.timeframe)
            }
            // The venue's cap on each symbol (a dataset's venue, for a dataset; its highest when the
            // venue does not list the dataset's symbol).
            const venue = venueOf(source)
            const listed = (yield* market.symbols({ exchange: venue })).symbols
            for (const symbol of symbols) {
              const cap = listed.find((s) =>
                s.symbol === symbol
              )?.max_leverage ??
                Math.max(...listed.map((s) => s.max_leverage))
              if (listed.length > 0 && input.leverage > cap) {
                return yield* new LeverageTooHigh({
                  error: `Leverage ${input.leverage} is above ${venue}'s cap of ${cap} on ${symbol}`
                })
              }
            }
            const params = yield* resolveParameters(program.parameters, input.params)
            return {
              user_id: caller.id,
              program_id: programId,
              account_id: input.account_id ?? null,
              symbol: symbols[0]!,
              symbols,
              exchange: input.exchange,
              timeframe: input.timeframe,
              timeframes: input.timeframes ?? [],
              start_at: new Date(start),
              end_at: new Date(end),
              initial_balance: input.initial_balance,
              fee_rate: input.fee_rate,
              maker_fee_rate: input.maker_fee_rate,
              slippage: input.slippage,
              slippage_model: input.slippage_model,
              fill_timing: input.fill_timing,
              margin_mode: input.margin_mode,
              warmup_bars: input.warmup_bars,
              leverage: input.leverage,
              params,
              code,
              now: yield* now
            }
          }))
        return { program, rows }
      })

    const submit = (caller: CurrentUserShape, programId: ProgramId, request: BacktestRequest) =>
      Effect.gen(function*() {
        const { rows } = yield* prepare(caller, programId, [request])
        const row = yield* repo.jobs.admit(caller.id, maxQueuedJobsPerUser, repo.insert(rows[0]!))
        yield* wakeup.wake(backtestJobs.table)
        return toBacktest(row)
      }).pipe(
        dieOnStorageFailure,
        withRequestSpan("Backtests.submit", {
          attributes: { userId: caller.id, programId, symbols: request.symbols ?? request.symbol }
        })
      )

    /**
     * Backtests of one program queued together or not at all (429 unless all of them fit under
     * MAX_QUEUED_JOBS_PER_USER), and `record` of them in the same transaction: the runs of one bias
     * check and the check's own row. Storage failures are left to the caller.
     */
    const submitAll = <A, E, R>(
      caller: CurrentUserShape,
      programId: ProgramId,
      requests: NonEmptyReadonlyArray<BacktestRequest>,
      record: (program: ProgramRow, backtests: ReadonlyArray<Backtest>) => Effect.Effect<A, E, R>
    ) =>
      Effect.gen(function*() {
        const { program, rows } = yield* prepare(caller, programId, requests)
        const recorded = yield* repo.jobs.admit(
          caller.id,
          maxQueuedJobsPerUser - (rows.length - 1),
          Effect.forEach(rows, (row) => repo.insert(row)).pipe(
            Effect.flatMap((inserted) => record(program, inserted.map(toBacktest)))
          )
        )
        yield* wakeup.wake(backtestJobs.table)
        return recorded
      }).pipe(withRequestSpan("Backtests.submitAll", { attributes: { userId: caller.id, programId } }))

    const get = (caller: CurrentUserShape, id: BacktestId) =>
      owned(caller, id).pipe(
        Effect.map(toBacktest),
        dieOnStorageFailure,
        withRequestSpan("Backtests.get", { attributes: { userId: caller.id, backtestId: id } })
      )

    // The trades live in the stored result; a page of them spares a client the whole body, and the read the whole result.
    const trades = (caller: CurrentUserShape, id: BacktestId, page: Pagination) =>
      repo.tradesOf(id).pipe(
        ownedBy(caller, `Backtest ${id}`),
        Effect.flatMap(({ result }) => {
          const all = result?.trades ?? []
          const { limit, offset } = pageOf(page)
          return Effect.map(
            decodeTrades(all.slice(offset, offset + limit)),
            (trades) => new BacktestTrades({ trades, total: all.length }, fromDecodedRow)
          )
        }),
        dieOnStorageFailure,
        withRequestSpan("Backtests.trades", { attributes: { userId: caller.id, backtestId: id } })
      )

    const cancel = (caller: CurrentUserShape, id: BacktestId) =>
      Effect.gen(function*() {
        yield* repo.owner(id).pipe(ownedBy(caller, `Backtest ${id}`))
        return toBacktest(yield* cancelUnfinished(repo.jobs, id, `Backtest ${id}`, yield* now, BacktestViewRow))
      }).pipe(
        dieOnStorageFailure,
        withRequestSpan("Backtests.cancel", { attributes: { userId: caller.id, backtestId: id } })
      )

    const history = (caller: CurrentUserShape, params: BacktestHistoryParams) =>
      Effect.gen(function*() {
        // A filter naming another user's program or account is refused like any other use of it.
        if (params.program_id !== undefined) yield* programs.check(caller, params.program_id)
        if (params.account_id !== undefined) yield* accounts.owned(caller, params.account_id)
        return yield* repo.history({ ...params, ...pageOf(params), user_id: caller.id })
      }).pipe(
        Effect.map((rows) => new BacktestHistory({ backtests: rows.map(toEntry) })),
        dieOnStorageFailure,
        withRequestSpan("Backtests.history", { attributes: { userId: caller.id } })
      )

    return { prepare, submit, submitAll, get, trades, cancel, history } as const
  })
}) {}
