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

export const RunRow = Schema.Struct({
  id: RunId,
  binding_id: BindingId,
  user_id: UserId,
  program_id: ProgramId,
  account_id: AccountId,
  symbol: Schema.String,
  trigger: RunTrigger,
  idempotency_key: Schema.String,
  status: RunStatus,
  attempts: Schema.Int,
  lease_until: Schema.NullOr(IsoTimestamp),
  claimed_by: Schema.NullOr(Schema.String),
  decision: Schema.NullOr(Schema.parseJson(Decision)),
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
  readonly trigger: RunTrigger
  readonly idempotency_key: string
}

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
            INSERT INTO automation_runs ${sql.insert(runs.map((r) => ({ ...r, status: "queued", created_at: now })))}
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

    /** Keeps the program's decision, so a run taken over after a crash acts on it instead of deciding again. */
    const decided = (run: JobRun, decision: Decision) =>
      Effect.flatMap(Schema.encode(Schema.parseJson(Decision))(decision), (json) =>
        sql`
          UPDATE automation_runs SET decision = ${json}
          WHERE id = ${run.id} AND attempts = ${run.attempts} AND status = 'running'`).pipe(Effect.asVoid)

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
