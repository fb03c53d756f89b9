import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Schema } from "effect"
import { CandleExchange } from "../market/Dataset.js"
import { ProgramParams } from "../programs/Parameters.js"
import { ProgramId } from "../programs/Program.js"
import { IsoTimestamp } from "../sql/Columns.js"
import { UserId } from "../users/User.js"
import { Timeframe } from "../venues/Venue.js"
import { BacktestId } from "./Backtest.js"
import { BiasCheckId, BiasCheckStatus, BiasDifference, BiasVerdict } from "./BiasCheck.js"

/** A check's runs by role: the full run, the runs cut before each `end` (epoch ms), the short warm-up's. */
export const BiasCheckRuns = Schema.Struct({
  full: BacktestId,
  cuts: Schema.Array(Schema.Struct({ end: Schema.Number, id: BacktestId })),
  warmup: BacktestId
})
export type BiasCheckRuns = typeof BiasCheckRuns.Type

const Outcome = Schema.Struct({ verdict: BiasVerdict, difference: Schema.NullOr(BiasDifference) })

/** What a check concluded once its runs ended, kept so the check outlives them. */
export const BiasCheckVerdict = Schema.Struct({
  status: BiasCheckStatus,
  lookahead: Outcome,
  warmup: Outcome,
  error: Schema.NullOr(Schema.String)
})
export type BiasCheckVerdict = typeof BiasCheckVerdict.Type

export const BiasCheckRow = Schema.Struct({
  id: BiasCheckId,
  user_id: UserId,
  program_id: ProgramId,
  code_hash: Schema.String,
  symbol: Schema.String,
  exchange: CandleExchange,
  timeframe: Timeframe,
  start_at: IsoTimestamp,
  end_at: IsoTimestamp,
  params: Schema.parseJson(ProgramParams),
  warmup_bars: Schema.Int,
  runs: Schema.parseJson(BiasCheckRuns),
  verdict: Schema.NullOr(Schema.parseJson(BiasCheckVerdict)),
  created_at: IsoTimestamp
})
export type BiasCheckRow = typeof BiasCheckRow.Type

const NewBiasCheck = Schema.Struct({
  user_id: UserId,
  program_id: ProgramId,
  code_hash: Schema.String,
  symbol: Schema.String,
  exchange: CandleExchange,
  timeframe: Timeframe,
  start_at: Schema.DateFromSelf,
  end_at: Schema.DateFromSelf,
  params: Schema.parseJson(ProgramParams),
  warmup_bars: Schema.Int,
  runs: Schema.parseJson(BiasCheckRuns),
  now: Schema.DateFromSelf
})

const ProgramChecks = Schema.Struct({
  program_id: ProgramId,
  code_hash: Schema.optional(Schema.String),
  limit: Schema.Int,
  offset: Schema.Int
})

/** SQL for bias checks; no rules here. */
export class BiasChecksRepo extends Effect.Service<BiasChecksRepo>()("@trading-platform/core/BiasChecksRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = SqlSchema.single({
      Request: NewBiasCheck,
      Result: BiasCheckRow,
      execute: (c) =>
        sql`
        INSERT INTO bias_checks (user_id, program_id, code_hash, symbol, exchange, timeframe, start_at, end_at, params,
          warmup_bars, runs, created_at)
        VALUES (${c.user_id}, ${c.program_id}, ${c.code_hash}, ${c.symbol}, ${c.exchange}, ${c.timeframe}, ${c.start_at},
          ${c.end_at}, ${c.params}, ${c.warmup_bars}, ${c.runs}, ${c.now})
        RETURNING *`
    })

    const findById = SqlSchema.findOne({
      Request: BiasCheckId,
      Result: BiasCheckRow,
      execute: (id) => sql`SELECT * FROM bias_checks WHERE id = ${id}`
    })

    /** A program's checks, newest first; only those of one version of its code when `code_hash` is given. */
    const ofProgram = SqlSchema.findAll({
      Request: ProgramChecks,
      Result: BiasCheckRow,
      execute: (q) =>
        sql`SELECT * FROM bias_checks WHERE ${
          sql.and([
            sql`program_id = ${q.program_id}`,
            ...(q.code_hash === undefined ? [] : [sql`code_hash = ${q.code_hash}`])
          ])
        } ORDER BY created_at DESC, id DESC LIMIT ${q.limit} OFFSET ${q.offset}`
    })

    /** Writes the verdict once; a check settled meanwhile keeps the first (they agree: the runs are the same). */
    const settle = SqlSchema.void({
      Request: Schema.Struct({ id: BiasCheckId, verdict: Schema.parseJson(BiasCheckVerdict) }),
      execute: ({ id, verdict }) =>
        sql`UPDATE bias_checks SET verdict = ${verdict} WHERE id = ${id} AND verdict IS NULL`
    })

    return { insert, findById, ofProgram, settle } as const
  })
}) {}
