import type { SqlError } from "@effect/sql/SqlError"
import { Cause, Clock, Data, Duration, Effect, Option, type Scope } from "effect"
import { randomBytes } from "node:crypto"
import { hostname } from "node:os"
import { withRequestSpan } from "../http/RequestSpan.js"
import { now } from "../time/Now.js"
import { BackgroundStart } from "./BackgroundStart.js"
import type { JobOptions } from "./JobOptions.js"
import type { JobQueue, JobRow } from "./JobQueue.js"
import { JobWakeup } from "./JobWakeup.js"

/** The run was cancelled or taken over by another worker: stop without writing. */
export class JobStopped extends Data.TaggedError("JobStopped") {}

/** The job's own failure, which another attempt would repeat: it fails for good with `message`. */
export class JobFailed extends Data.TaggedError("JobFailed")<{ readonly message: string }> {}

/** What a running job can do with its lease. */
export interface JobLease {
  /** Writes progress (0..1) and renews the lease; fails with `JobStopped` when the run is no longer this worker's. */
  readonly checkpoint: (progress: number) => Effect.Effect<void, JobStopped | SqlError>
  /**
   * Runs `effect` while renewing the lease every third of it (at the last progress), so a long
   * step keeps its job; fails with `JobStopped` as soon as a renewal finds the run is no longer ours.
   */
  readonly keepAlive: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | JobStopped | SqlError, R>
}

/** A kind of job as its workers run it. */
export interface JobWorkersSpec<Row extends JobRow, Result, E, R> {
  /** Names the kind in wake-ups, logs and spans. */
  readonly kind: string
  readonly queue: JobQueue<Row, Result>
  readonly options: JobOptions
  /**
   * Runs one claimed job to its result. `JobFailed` fails it for good, `JobStopped` leaves it to
   * whoever holds it now; any other failure hands it back for another attempt.
   */
  readonly run: (row: Row, lease: JobLease) => Effect.Effect<Result, E, R | Scope.Scope>
  /**
   * Runs when a worker that has just run a job finds no other to claim: the queue has run dry here,
   * e.g. for whoever plans more jobs or waits for the last to end. Not on the idle polls after.
   */
  readonly drained?: Effect.Effect<void>
}

const messageOf = (cause: Cause.Cause<unknown>) => {
  const error = Cause.squash(cause)
  if (typeof error === "object" && error !== null && "error" in error && typeof error.error === "string") {
    return error.error
  }
  return error instanceof Error ? error.message : String(error)
}

/**
 * The pool of workers of one kind of job on this instance, running until the scope closes. Each
 * worker claims one job at a time from the database (any replica may run any job; the claim hands
 * a job to one worker), runs it, and writes its end; a job whose worker died is claimed again once
 * its lease expires, up to `maxAttempts` claims.
 */
export const runJobWorkers = <Row extends JobRow, Result, E, R>(
  spec: JobWorkersSpec<Row, Result, E, R>
): Effect.Effect<void, never, R | JobWakeup | Scope.Scope> =>
  Effect.gen(function*() {
    const { kind, options, queue } = spec
    const wakeup = yield* JobWakeup
    const workerName = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`
    const leaseUntil = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms + Duration.toMillis(options.lease)))

    const lease = (run: Row): JobLease => {
      let progress = 0
      const checkpoint = (at: number) =>
        Effect.gen(function*() {
          progress = at
          const ours = yield* queue.renew(run, at, yield* leaseUntil)
          if (!ours) return yield* new JobStopped()
        })
      const renewing = Effect.forever(
        Effect.zipRight(Effect.sleep(Duration.toMillis(options.lease) / 3), Effect.suspend(() => checkpoint(progress)))
      )
      return { checkpoint, keepAlive: (effect) => Effect.raceFirst(effect, renewing) }
    }

    const run = (row: Row) => {
      const fail = (error: string) => Effect.flatMap(now, (at) => queue.fail(row, error, at))
      if (row.attempts > options.maxAttempts) {
        return fail(`Gave up after ${options.maxAttempts} attempts${row.error === null ? "" : `: ${row.error}`}`)
      }
      return spec.run(row, lease(row)).pipe(
        Effect.scoped,
        Effect.flatMap((result) => Effect.flatMap(now, (at) => queue.complete(row, result, at))),
        // Whoever holds the row now (the canceller, or a worker that took it over) has the last word.
        Effect.catchAll((e): Effect.Effect<void, unknown> =>
          e instanceof JobStopped ? Effect.void : e instanceof JobFailed ? fail(e.message) : Effect.fail(e)
        ),
        // Anything else (a venue or the database failing, a thread dying, a defect) hands the job
        // back for another attempt, woken for like a new one; the attempt limit ends a job that
        // keeps failing this way.
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.failCause(cause)
            : Effect.flatMap(now, (at) => queue.release(row, messageOf(cause), at)).pipe(
              Effect.zipRight(wakeup.wake(kind))
            )
        ),
        // Stopping (a shutdown) hands it back at once rather than when the lease runs out, and
        // without using up an attempt; another instance's idle worker is woken for it.
        Effect.onInterrupt(() =>
          Effect.flatMap(now, (at) => queue.handBack(row, "The worker stopped", at)).pipe(
            Effect.zipRight(wakeup.wake(kind)),
            Effect.zipRight(Effect.log(`Handed back ${kind} job ${row.id}: the worker stopped`)),
            Effect.ignore
          )
        ),
        withRequestSpan("JobWorkers.run", { attributes: { kind, jobId: row.id, attempt: row.attempts } })
      )
    }

    // One idle worker polls, every `pollInterval`, for a job it was not woken for; the others wait
    // for a wake-up only. So an idle instance makes one claim per interval and kind, not one per
    // worker. A poller that claims a job relays, and the worker woken takes over the polling. Its
    // claim between two waits keeps a test clock's jump from spinning the poll.
    let polling = false
    const idle = Effect.suspend(() => {
      if (polling) return wakeup.waitForJob(kind)
      polling = true
      return Effect.ensuring(wakeup.idle(kind, options.pollInterval), Effect.sync(() => (polling = false)))
    })

    // Whether a worker's last claim found a job: its first empty claim after one calls `drained`.
    const claimAndRun = (worker: { ran: boolean }) =>
      Effect.gen(function*() {
        const claimed = yield* queue.claim({ now: yield* now, leaseUntil: yield* leaseUntil, worker: workerName })
        if (Option.isNone(claimed)) {
          if (worker.ran && spec.drained !== undefined) yield* spec.drained
          worker.ran = false
          return yield* idle
        }
        worker.ran = true
        // One wake-up stands for any number of jobs queued meanwhile: pass it on to the next idle worker.
        yield* wakeup.relay(kind)
        yield* run(claimed.value)
      }).pipe(
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.failCause(cause)
            : Effect.zipRight(
              Effect.logWarning(`${kind} worker failed; retrying`, cause),
              Effect.sleep(options.pollInterval)
            )
        )
      )

    const start = yield* BackgroundStart
    for (let i = 0; i < options.concurrency; i++) {
      yield* Effect.forkScoped(Effect.zipRight(start, Effect.forever(claimAndRun({ ran: false }))))
    }
  })
