import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Option, type ParseResult, Schema } from "effect"
import { Conflict, RateLimited } from "../http/Errors.js"
import { columnsOf } from "../sql/Columns.js"

/** Identifies one run of a job: a later claim of the same row has more attempts, so a stale worker's writes miss. */
export interface JobRun {
  readonly id: number
  readonly attempts: number
}

/** What every job row has, whatever its kind (see "Jobs" in `docs/contributing.md`); its table also has the owner's `user_id`. */
export interface JobRow extends JobRun {
  readonly error: string | null
}

/**
 * One kind of durable job: the table that holds its jobs (one row each, with the job columns next
 * to the kind's own), the row as read back, and the result stored as JSON in `result`.
 */
export interface JobKind<Row extends JobRow, RowEncoded, Result, ResultEncoded> {
  readonly table: string
  readonly Row: Schema.Schema<Row, RowEncoded>
  readonly Result: Schema.Schema<Result, ResultEncoded>
  /** Columns of the kind's own written with the result, e.g. a summary that lists read without the result. */
  readonly summary?: (result: Result) => Record<string, unknown>
  /**
   * A column whose jobs run one at a time (e.g. an automation run's binding): a job is not claimed
   * while another job with the same value is running (one whose lease expired is claimed first,
   * being older). A unique index on the column where `status = 'running'` settles a race.
   */
  readonly exclusiveBy?: string
}

type Failure = SqlError | ParseResult.ParseError

/** A row schema whose fields name its columns (see `columnsOf`). */
type RowOf<A, I> = Schema.Schema<A, I> & { readonly fields: Readonly<Record<string, unknown>> }

/** Seconds a submission over the cap is told to wait: about as long as a short job takes. */
const admitRetryAfter = 10

/** The claim, lease and end of the jobs of one kind: the only SQL that moves a job between statuses. */
export interface JobQueue<Row, Result> {
  /**
   * Queues a job with `insert` unless its owner already has `max` of this kind queued or running
   * (429 `rate_limited`). The owner's row is locked meanwhile, so parallel submissions cannot pass
   * the cap together.
   */
  readonly admit: <A, E, R>(
    userId: number,
    max: number,
    insert: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | RateLimited | SqlError, R>
  /**
   * Takes a job that is queued, or running under an expired lease (its worker died), so a job
   * left by a dead worker resumes once its lease ends. Owners take turns: first the owner with the
   * fewest jobs running, then the one whose last job started longest ago, then the oldest job; so
   * one user's queue of long jobs does not keep another's waiting behind all of it.
   */
  readonly claim: (claim: { readonly now: Date; readonly leaseUntil: Date; readonly worker: string }) => Effect.Effect<
    Option.Option<Row>,
    Failure
  >
  /** Writes progress and renews the lease; false when the run is no longer this worker's (cancelled or reclaimed). */
  readonly renew: (run: JobRun, progress: number, leaseUntil: Date) => Effect.Effect<boolean, SqlError>
  /** Ends the job with its result; an earlier attempt's `error` is cleared (unless `summary` writes one). */
  readonly complete: (run: JobRun, result: Result, now: Date) => Effect.Effect<void, Failure>
  readonly fail: (run: JobRun, error: string, now: Date) => Effect.Effect<void, Failure>
  /**
   * Hands the job back for another attempt: `queued` again, with no lease, no progress (the next
   * attempt starts over) and why this one ended in `error`, so the next claim takes it.
   */
  readonly release: (run: JobRun, error: string, now: Date) => Effect.Effect<void, Failure>
  /**
   * Hands back a job its worker was stopped in (a shutdown): like `release`, but the attempt does
   * not count, since the job itself did nothing wrong. The next claim reuses the attempt number,
   * which is safe only once the stopped run can write nothing more (call it after the run has ended).
   */
  readonly handBack: (run: JobRun, error: string, now: Date) => Effect.Effect<void, Failure>
  /**
   * Cancels a job that has not finished (clearing an earlier attempt's `error`), answering its
   * `Answer` columns (what the caller answers with, not a job's code); none when it had finished.
   */
  readonly cancel: <A, I>(id: number, now: Date, Answer: RowOf<A, I>) => Effect.Effect<Option.Option<A>, Failure>
}

export const makeJobQueue = <Row extends JobRow, RowEncoded, Result, ResultEncoded>(
  kind: JobKind<Row, RowEncoded, Result, ResultEncoded>
): Effect.Effect<JobQueue<Row, Result>, never, SqlClient.SqlClient> =>
  Effect.map(SqlClient.SqlClient, (sql) => {
    const table = sql(kind.table)
    const encodeResult = Schema.encode(Schema.parseJson(kind.Result))
    // Writes to a run match its attempt and a running status, so a cancelled or reclaimed run's writes miss.
    const ofRun = (run: JobRun) => sql`id = ${run.id} AND attempts = ${run.attempts} AND status = 'running'`

    // `SKIP LOCKED` lets concurrent claimers pass over a row another one is taking, so a job is
    // handed to one worker at a time. Each owner with a job waiting is ranked once per claim (two
    // index lookups, see migration 0038), not once per waiting job: as a subquery in FROM the
    // planner merged the ranking into the join and ran both lookups for every waiting job.
    const claimable = (row: string, now: Date) => {
      const r = sql(row)
      return sql`(${r}.status = 'queued' OR (${r}.status = 'running' AND ${r}.lease_until < ${now}))`
    }
    const claim = SqlSchema.findOne({
      Request: Schema.Struct({ now: Schema.DateFromSelf, leaseUntil: Schema.DateFromSelf, worker: Schema.String }),
      Result: kind.Row,
      execute: (c) =>
        sql`
        WITH owner AS MATERIALIZED (
          SELECT w.user_id,
            (SELECT count(*) FROM ${table} r
              WHERE r.user_id = w.user_id AND r.status = 'running' AND r.lease_until >= ${c.now}) AS running,
            (SELECT max(r.started_at) FROM ${table} r WHERE r.user_id = w.user_id) AS last_started
          FROM (SELECT DISTINCT user_id FROM ${table} q WHERE ${claimable("q", c.now)}) w
        )
        UPDATE ${table}
        SET status = 'running', attempts = attempts + 1, lease_until = ${c.leaseUntil}, claimed_by = ${c.worker},
          started_at = COALESCE(started_at, ${c.now})
        WHERE id = (
          SELECT j.id FROM ${table} j
          JOIN owner ON owner.user_id = j.user_id
          WHERE ${claimable("j", c.now)}${
          kind.exclusiveBy === undefined ? sql`` : sql`
            AND NOT EXISTS (
              SELECT 1 FROM ${table} o
              WHERE o.${sql(kind.exclusiveBy)} = j.${sql(kind.exclusiveBy)} AND o.status = 'running' AND o.id <> j.id
            )`
        }
          ORDER BY owner.running, owner.last_started NULLS FIRST, j.id
          FOR UPDATE OF j SKIP LOCKED
          LIMIT 1
        )
        RETURNING *`
    })

    const admit = <A, E, R>(userId: number, max: number, insert: Effect.Effect<A, E, R>) =>
      Effect.gen(function*() {
        yield* sql`SELECT id FROM users WHERE id = ${userId} FOR UPDATE`
        const [active] = yield* sql<{ count: number }>`
          SELECT count(*)::int AS count FROM ${table} WHERE user_id = ${userId} AND status IN ('queued', 'running')`
        if ((active?.count ?? 0) >= max) {
          return yield* new RateLimited({
            error: `At most ${max} jobs of this kind queued or running per user; retry when one has finished`,
            retry_after: admitRetryAfter
          })
        }
        return yield* insert
      }).pipe(sql.withTransaction)

    const renew = (run: JobRun, progress: number, leaseUntil: Date) =>
      Effect.map(
        sql`UPDATE ${table} SET progress = ${progress}, lease_until = ${leaseUntil} WHERE ${ofRun(run)} RETURNING id`,
        (rows) => rows.length > 0
      )

    const complete = (run: JobRun, result: Result, now: Date) =>
      Effect.flatMap(encodeResult(result), (json) => {
        // An earlier attempt's error (`The worker stopped`, say) does not outlive the job's success.
        const columns = { error: null, ...kind.summary?.(result) }
        return sql`
          UPDATE ${table} SET status = 'completed', progress = 1, lease_until = NULL, finished_at = ${now},
            result = ${json}, ${sql.update(columns)}
          WHERE ${ofRun(run)}`
      }).pipe(Effect.asVoid)

    const fail = (run: JobRun, error: string, now: Date) =>
      sql`
        UPDATE ${table} SET status = 'failed', lease_until = NULL, finished_at = ${now}, error = ${error}
        WHERE ${ofRun(run)}`.pipe(Effect.asVoid)

    // A job handed back waits for a worker like a new one: queued, unleased, and at no progress.
    const requeue = sql`status = 'queued', progress = 0, lease_until = NULL, claimed_by = NULL`

    const release = (run: JobRun, error: string) =>
      sql`UPDATE ${table} SET ${requeue}, error = ${error} WHERE ${ofRun(run)}`.pipe(Effect.asVoid)

    const handBack = (run: JobRun, error: string) =>
      sql`UPDATE ${table} SET ${requeue}, error = ${error}, attempts = attempts - 1 WHERE ${ofRun(run)}`.pipe(
        Effect.asVoid
      )

    const cancel = <A, I>(id: number, now: Date, Answer: RowOf<A, I>) =>
      SqlSchema.findOne({
        Request: Schema.Void,
        Result: Answer,
        execute: () =>
          sql`
          UPDATE ${table} SET status = 'cancelled', lease_until = NULL, finished_at = ${now}, error = NULL
          WHERE id = ${id} AND status IN ('queued', 'running')
          RETURNING ${columnsOf(sql, Answer)}`
      })(undefined)

    return { admit, claim, renew, complete, fail, release, handBack, cancel }
  })

/** Cancels a job that has not finished; one that has answers 409 `conflict` (`what` names it, e.g. `Backtest 7`). */
export const cancelUnfinished = <Row, Result, A, I>(
  queue: JobQueue<Row, Result>,
  id: number,
  what: string,
  at: Date,
  Answer: RowOf<A, I>
) =>
  Effect.flatMap(
    queue.cancel(id, at, Answer),
    Option.match({
      onNone: () => Effect.fail(new Conflict({ error: `${what} has already finished` })),
      onSome: (row) => Effect.succeed(row)
    })
  )
