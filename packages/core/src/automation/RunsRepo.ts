import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Schema } from "effect"
import { AccountId } from "../accounts/Account.js"
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

/** One claim of a run: a later claim has more attempts, so a stale worker's writes miss. */
export interface RunClaim {
  readonly id: RunId
  readonly attempts: number
}

export interface NewRun {
  readonly binding_id: BindingId
  readonly user_id: UserId
  readonly program_id: ProgramId
  readonly account_id: AccountId
  readonly symbol: string
  readonly trigger: RunTrigger
  readonly idempotency_key: string
}

/** SQL for automation runs, a durable job queue like backtests: the claim is the only place a run changes hands. */
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
      execute: (q) => sql`
        SELECT * FROM automation_runs WHERE binding_id = ${q.binding_id}
        ORDER BY id DESC LIMIT ${q.limit} OFFSET ${q.offset}`
    })

    /**
     * Takes the oldest run that is queued, or running under an expired lease, of a binding that has
     * no other run going. Two claimers racing for two runs of one binding both pass the filter; the
     * unique index on running runs lets one through and makes the other's statement fail, which
     * reads as nothing to claim.
     */
    const claim = (c: { readonly now: Date; readonly lease_until: Date; readonly worker: string }) =>
      sql`
        UPDATE automation_runs
        SET status = 'running', attempts = attempts + 1, lease_until = ${c.lease_until}, claimed_by = ${c.worker},
          started_at = COALESCE(started_at, ${c.now})
        WHERE id = (
          SELECT r.id FROM automation_runs r
          WHERE (r.status = 'queued' OR (r.status = 'running' AND r.lease_until < ${c.now}))
            AND NOT EXISTS (
              SELECT 1 FROM automation_runs o WHERE o.binding_id = r.binding_id AND o.status = 'running' AND o.id <> r.id
            )
          ORDER BY r.id
          FOR UPDATE SKIP LOCKED
          LIMIT 1
        )
        RETURNING *`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.Array(RunRow))),
        Effect.map((rows) => rows[0]),
        Effect.catchIf(
          (e) => e._tag === "SqlError" && (e.cause as { code?: unknown } | undefined)?.code === uniqueViolation,
          () => Effect.succeed(undefined)
        )
      )

    /** Renews the lease; false when the run is no longer this claim's. */
    const renew = (run: RunClaim, leaseUntil: Date) =>
      Effect.map(
        sql`
          UPDATE automation_runs SET lease_until = ${leaseUntil}
          WHERE id = ${run.id} AND attempts = ${run.attempts} AND status = 'running' RETURNING id`,
        (rows) => rows.length > 0
      )

    /** Keeps the program's decision, so a run taken over after a crash acts on it instead of deciding again. */
    const decided = (run: RunClaim, decision: Decision) =>
      Effect.flatMap(Schema.encode(Schema.parseJson(Decision))(decision), (json) =>
        sql`
          UPDATE automation_runs SET decision = ${json}
          WHERE id = ${run.id} AND attempts = ${run.attempts} AND status = 'running'`).pipe(Effect.asVoid)

    const finish = (run: RunClaim, status: "completed" | "failed", error: string | null, now: Date) =>
      sql`
        UPDATE automation_runs SET status = ${status}, error = ${error}, lease_until = NULL, finished_at = ${now}
        WHERE id = ${run.id} AND attempts = ${run.attempts} AND status = 'running'`.pipe(Effect.asVoid)

    /** Hands the run back for another attempt: the lease ends now. */
    const release = (run: RunClaim, error: string, now: Date) =>
      sql`
        UPDATE automation_runs SET lease_until = ${now}, error = ${error}
        WHERE id = ${run.id} AND attempts = ${run.attempts} AND status = 'running'`.pipe(Effect.asVoid)

    return { enqueue, findById, listByBinding, claim, renew, decided, finish, release } as const
  })
}) {}
