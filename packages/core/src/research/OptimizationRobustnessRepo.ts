import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Schema } from "effect"
import { EquityPointSchema } from "../backtests/Backtest.js"
import { ProgramParams } from "../programs/Parameters.js"
import { OptimizationId } from "./Optimization.js"

/** A completed search trial as robustness reads it: its point, its objective and its curve (empty before curves were kept). */
export const SearchTrialCurve = Schema.Struct({
  trial: Schema.Int,
  params: Schema.parseJson(ProgramParams),
  objective: Schema.NullOr(Schema.Number),
  curve: Schema.parseJson(Schema.Array(EquityPointSchema))
})
export type SearchTrialCurve = typeof SearchTrialCurve.Type

/** SQL for the robustness of optimisations: the curves of a fold's search trials. */
export class OptimizationRobustnessRepo
  extends Effect.Service<OptimizationRobustnessRepo>()("@trading-platform/core/OptimizationRobustnessRepo", {
    effect: Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      // Only the curve leaves the database, not the rest of each stored run.
      const searchTrials = SqlSchema.findAll({
        Request: Schema.Struct({ id: OptimizationId, fold: Schema.Int }),
        Result: SearchTrialCurve,
        execute: (q) =>
          sql`SELECT trial, params, objective,
            COALESCE((result::jsonb #> '{outcome,equity_curve}')::text, '[]') AS curve
            FROM optimization_trials
            WHERE optimization_id = ${q.id} AND fold = ${q.fold} AND role = 'search' AND status = 'completed'
            ORDER BY trial`
      })

      return { searchTrials } as const
    })
  })
{}
