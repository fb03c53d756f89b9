import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Schema } from "effect"
import { AccountId } from "../accounts/Account.js"
import { ProgramId } from "../programs/Program.js"
import { IsoTimestamp } from "../sql/Columns.js"
import { UserId } from "../users/User.js"
import { Exchange, Timeframe } from "../venues/Venue.js"
import { BacktestId, BacktestOutcome, BacktestStatus } from "./Backtest.js"

const Numeric = Schema.NumberFromString

export const BacktestRow = Schema.Struct({
  id: BacktestId,
  user_id: UserId,
  program_id: Schema.NullOr(ProgramId),
  account_id: Schema.NullOr(AccountId),
  symbol: Schema.String,
  exchange: Exchange,
  timeframe: Timeframe,
  start_at: IsoTimestamp,
  end_at: IsoTimestamp,
  initial_balance: Numeric,
  fee_rate: Schema.Number,
  slippage: Schema.Number,
  leverage: Schema.Number,
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

const NewBacktest = Schema.Struct({
  user_id: UserId,
  program_id: ProgramId,
  account_id: Schema.NullOr(AccountId),
  symbol: Schema.String,
  exchange: Exchange,
  timeframe: Timeframe,
  start_at: Schema.DateFromSelf,
  end_at: Schema.DateFromSelf,
  initial_balance: Schema.Number,
  fee_rate: Schema.Number,
  slippage: Schema.Number,
  leverage: Schema.Number,
  code: Schema.String,
  now: Schema.DateFromSelf
})

/** Identifies one run of a job: a later claim of the same row has more attempts, so a stale worker's writes miss. */
const Run = Schema.Struct({ id: BacktestId, attempts: Schema.Int })
export type BacktestRun = typeof Run.Type

const HistoryQuery = Schema.Struct({
  user_id: UserId,
  program_id: Schema.optional(ProgramId),
  account_id: Schema.optional(AccountId),
  status: Schema.optional(BacktestStatus),
  limit: Schema.Int,
  offset: Schema.Int
})

/** SQL for backtest jobs; the claim is the only place a job changes hands. */
export class BacktestsRepo extends Effect.Service<BacktestsRepo>()("@trading-platform/core/BacktestsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = SqlSchema.single({
      Request: NewBacktest,
      Result: BacktestRow,
      execute: (b) => sql`
        INSERT INTO backtests (user_id, program_id, account_id, symbol, exchange, timeframe, start_at, end_at,
          initial_balance, fee_rate, slippage, leverage, code, status, created_at)
        VALUES (${b.user_id}, ${b.program_id}, ${b.account_id}, ${b.symbol}, ${b.exchange}, ${b.timeframe},
          ${b.start_at}, ${b.end_at}, ${b.initial_balance}, ${b.fee_rate}, ${b.slippage}, ${b.leverage}, ${b.code},
          'queued', ${b.now})
        RETURNING *`
    })

    const findById = SqlSchema.findOne({
      Request: BacktestId,
      Result: BacktestRow,
      execute: (id) => sql`SELECT * FROM backtests WHERE id = ${id}`
    })

    const history = SqlSchema.findAll({
      Request: HistoryQuery,
      Result: BacktestRow,
      execute: (q) =>
        sql`
          SELECT * FROM backtests WHERE ${
          sql.and([
            sql`user_id = ${q.user_id}`,
            ...(q.program_id === undefined ? [] : [sql`program_id = ${q.program_id}`]),
            ...(q.account_id === undefined ? [] : [sql`account_id = ${q.account_id}`]),
            ...(q.status === undefined ? [] : [sql`status = ${q.status}`])
          ])
        }
          ORDER BY created_at DESC, id DESC LIMIT ${q.limit} OFFSET ${q.offset}`
    })

    /**
     * Takes the oldest job that is queued, or running under an expired lease (its worker died).
     * `SKIP LOCKED` lets concurrent claimers pass over a row another one is taking, so a job is
     * handed to one worker at a time.
     */
    const claim = SqlSchema.findOne({
      Request: Schema.Struct({ now: Schema.DateFromSelf, lease_until: Schema.DateFromSelf, worker: Schema.String }),
      Result: BacktestRow,
      execute: (c) => sql`
        UPDATE backtests
        SET status = 'running', attempts = attempts + 1, lease_until = ${c.lease_until}, claimed_by = ${c.worker},
          started_at = COALESCE(started_at, ${c.now})
        WHERE id = (
          SELECT id FROM backtests
          WHERE status = 'queued' OR (status = 'running' AND lease_until < ${c.now})
          ORDER BY id
          FOR UPDATE SKIP LOCKED
          LIMIT 1
        )
        RETURNING *`
    })

    /** Writes progress and renews the lease; false when the run is no longer this worker's (cancelled or reclaimed). */
    const checkpoint = (run: BacktestRun, progress: number, leaseUntil: Date) =>
      Effect.map(
        sql`
          UPDATE backtests SET progress = ${progress}, lease_until = ${leaseUntil}
          WHERE id = ${run.id} AND attempts = ${run.attempts} AND status = 'running'
          RETURNING id`,
        (rows) => rows.length > 0
      )

    const complete = (run: BacktestRun, outcome: BacktestOutcome, now: Date) =>
      Effect.flatMap(Schema.encode(Schema.parseJson(BacktestOutcome))(outcome), (json) => {
        const { metrics, trades } = outcome
        return sql`
          UPDATE backtests SET status = 'completed', progress = 1, lease_until = NULL, finished_at = ${now},
            result = ${json}, total_pnl = ${metrics.total_pnl}, total_trades = ${metrics.total_trades},
            winning_trades = ${trades.filter((t) => t.pnl > 0).length}
          WHERE id = ${run.id} AND attempts = ${run.attempts} AND status = 'running'`
      }).pipe(Effect.asVoid)

    const fail = (run: BacktestRun, error: string, now: Date) =>
      sql`
        UPDATE backtests SET status = 'failed', lease_until = NULL, finished_at = ${now}, error = ${error}
        WHERE id = ${run.id} AND attempts = ${run.attempts} AND status = 'running'`.pipe(Effect.asVoid)

    /** Hands the job back for another attempt: the lease ends now, so the next claim takes it. */
    const release = (run: BacktestRun, error: string, now: Date) =>
      sql`
        UPDATE backtests SET lease_until = ${now}, error = ${error}
        WHERE id = ${run.id} AND attempts = ${run.attempts} AND status = 'running'`.pipe(Effect.asVoid)

    const cancel = SqlSchema.findOne({
      Request: Schema.Struct({ id: BacktestId, now: Schema.DateFromSelf }),
      Result: BacktestRow,
      execute: (c) => sql`
        UPDATE backtests SET status = 'cancelled', lease_until = NULL, finished_at = ${c.now}
        WHERE id = ${c.id} AND status IN ('queued', 'running')
        RETURNING *`
    })

    return { insert, findById, history, claim, checkpoint, complete, fail, release, cancel } as const
  })
}) {}
