import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Option, Schema } from "effect"
import { AccountId } from "../accounts/Account.js"
import { type JobQueue, type JobRun, makeJobQueue } from "../jobs/JobQueue.js"
import { ProgramId } from "../programs/Program.js"
import { Decision } from "../sandbox/Decision.js"
import { IsoTimestamp } from "../sql/Columns.js"
import { UserId } from "../users/User.js"
import { BindingId, RunId, RunStatus, RunTrigger } from "./Automation.js"
import type { BindingRow } from "./BindingsRepo.js"

export const RunRow = Schema.Struct({
  id: RunId,
  binding_id: BindingId,
  user_id: UserId,
  program_id: ProgramId,
  account_id: AccountId,
  symbol: Schema.String,
  symbols: Schema.parseJson(Schema.Array(Schema.String)),
  trigger: RunTrigger,
  idempotency_key: Schema.String,
  status: RunStatus,
  attempts: Schema.Int,
  lease_until: Schema.NullOr(IsoTimestamp),
  claimed_by: Schema.NullOr(Schema.String),
  /** A run of one symbol keeps its decision; a portfolio run the list, one per symbol. */
  decision: Schema.NullOr(Schema.parseJson(Schema.Union(Decision, Schema.Array(Decision)))),
  error: Schema.NullOr(Schema.String),
  created_at: IsoTimestamp,
  started_at: Schema.NullOr(IsoTimestamp),
  finished_at: Schema.NullOr(IsoTimestamp)
})
export type RunRow = typeof RunRow.Type

const uniqueViolation = "23505"

/** The kind of job of automation runs (in wake-ups, logs and spans). */
export const automationJobKind = "automation"

/** What a completed run leaves: the refusal of its order, if the account's rules refused it (kept as the run's `error`). */
export const RunResult = Schema.Struct({ refusal: Schema.NullOr(Schema.String) })
export type RunResult = typeof RunResult.Type

export interface NewRun {
  readonly binding_id: BindingId
  readonly user_id: UserId
  readonly program_id: ProgramId
  readonly account_id: AccountId
  readonly symbol: string
  readonly symbols: ReadonlyArray<string>
  readonly trigger: RunTrigger
  readonly idempotency_key: string
}

/** The binding's side of the runs it queues. */
type Queuing = Pick<BindingRow, "id" | "user_id" | "program_id" | "account_id" | "symbols" | "portfolio">

/**
 * The runs a trigger queues for a binding: one per symbol (`only` that one, when given), or one
 * deciding for all of them for a portfolio binding. `key` makes each run's idempotency key from
 * its symbol, `*` for a portfolio run.
 */
export const runsFor = (
  binding: Queuing,
  trigger: RunTrigger,
  key: (symbol: string) => string,
  only?: string
): Array<NewRun> => {
  const run = (symbols: ReadonlyArray<string>, keyed: string): NewRun => ({
    binding_id: binding.id,
    user_id: binding.user_id,
    program_id: binding.program_id,
    account_id: binding.account_id,
    symbol: symbols[0]!,
    symbols,
    trigger,
    idempotency_key: key(keyed)
  })
  if (binding.portfolio) return [run(binding.symbols, "*")]
  return binding.symbols.filter((symbol) => only === undefined || symbol === only).map((symbol) =>
    run([symbol], symbol)
  )
}

/** A run's decisions, one per symbol in its order; null before it decided. */
export const decisionsOf = (run: Pick<RunRow, "decision">): ReadonlyArray<Decision> | null =>
  run.decision === null ? null : Array.isArray(run.decision) ? run.decision : [run.decision as Decision]

/** SQL for automation runs: their queueing (one per trigger), reads, decisions, and the job queue that hands them to workers. */
export class RunsRepo extends Effect.Service<RunsRepo>()("@trading-platform/core/RunsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Queues runs; a key seen before (the same trigger, from any replica) is skipped. Answers the new rows. */
    const enqueue = (runs: ReadonlyArray<NewRun>, now: Date) =>
      runs.length === 0
        ? Effect.succeed([])
        : Effect.flatMap(
          sql`
            INSERT INTO automation_runs ${
            sql.insert(
              runs.map((r) => ({ ...r, symbols: JSON.stringify(r.symbols), status: "queued", created_at: now }))
            )
          }
            ON CONFLICT (idempotency_key) DO NOTHING RETURNING *`,
          Schema.decodeUnknown(Schema.Array(RunRow))
        )

    const findById = SqlSchema.findOne({
      Request: RunId,
      Result: RunRow,
      execute: (id) => sql`SELECT * FROM automation_runs WHERE id = ${id}`
    })

    const listByBinding = SqlSchema.findAll({
      Request: Schema.Struct({ binding_id: BindingId, limit: Schema.Int, offset: Schema.Int }),
      Result: RunRow,
      execute: (q) =>
        sql`
        SELECT * FROM automation_runs WHERE binding_id = ${q.binding_id}
        ORDER BY id DESC LIMIT ${q.limit} OFFSET ${q.offset}`
    })

    /** Keeps the program's decisions, so a run taken over after a crash acts on them instead of deciding again. */
    const decided = (run: JobRun & Pick<RunRow, "symbols">, decisions: ReadonlyArray<Decision>) =>
      Effect.flatMap(
        RunRow.fields.decision.pipe(Schema.encode)(run.symbols.length === 1 ? decisions[0]! : decisions),
        (json) =>
          sql`
          UPDATE automation_runs SET decision = ${json}
          WHERE id = ${run.id} AND attempts = ${run.attempts} AND status = 'running'`
      ).pipe(Effect.asVoid)

    /**
     * The runs as durable jobs, one per binding at a time. Two claimers racing for two runs of one
     * binding both pass the claim's filter; the unique index on running runs lets one through and
     * fails the other's statement, which reads as nothing to claim.
     */
    const jobs = yield* makeJobQueue({
      table: "automation_runs",
      Row: RunRow,
      Result: RunResult,
      summary: (result) => ({ error: result.refusal }),
      exclusiveBy: "binding_id"
    })
    const queue: JobQueue<RunRow, RunResult> = {
      ...jobs,
      claim: (c) =>
        jobs.claim(c).pipe(
          Effect.catchIf(
            (e) => e._tag === "SqlError" && (e.cause as { code?: unknown } | undefined)?.code === uniqueViolation,
            () => Effect.succeed(Option.none())
          )
        )
    }

    return { enqueue, findById, listByBinding, decided, queue } as const
  })
}) {}
