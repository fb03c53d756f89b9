import * as SqlClient from "@effect/sql/SqlClient"
import { Clock, Deferred, type Duration, Effect, Queue, Schedule, Stream } from "effect"
import { randomBytes } from "node:crypto"
import { Notifications } from "../sql/Notifications.js"

/** The channel of every kind's wake-ups; the payload is the kind. */
const channel = "job_wakeup"
/** The payloads that only check the channel: no kind of job starts with it. */
const pingPrefix = "ping:"

/**
 * Wakes idle workers when a job of their kind is queued, on every instance that shares the
 * database: `wake` notifies the channel (at commit, inside a transaction), and each instance's
 * listener wakes one idle worker of the kind. One idle worker of a kind polls meanwhile (see
 * `runJobWorkers`), which recovers a lost notification or a job whose worker died.
 */
export class JobWakeup extends Effect.Service<JobWakeup>()("@trading-platform/core/JobWakeup", {
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const notifications = yield* Notifications
    const queueOf = yield* Effect.cachedFunction((_kind: string) => Queue.sliding<void>(1))
    const signal = (kind: string) =>
      Effect.asVoid(Effect.flatMap(queueOf(kind), (queue) => Queue.offer(queue, undefined)))
    const ping = `${pingPrefix}${randomBytes(6).toString("hex")}`
    const listening = yield* Deferred.make<void>()
    // A listener that fails listens again; meanwhile (as after any lost notification) the polls find the jobs.
    yield* notifications.listen(channel).pipe(
      Stream.runForEach((payload) =>
        payload === ping
          ? Deferred.succeed(listening, undefined)
          : payload.startsWith(pingPrefix)
          ? Effect.void
          : signal(payload)
      ),
      Effect.tapErrorCause((cause) => Effect.logWarning("Job wake-ups stopped; listening again", cause)),
      Effect.retry(Schedule.spaced("5 seconds")),
      Effect.forkScoped
    )
    // The listener runs once its own ping comes back, so no job queued after this is missed; a
    // database that never answers leaves the jobs to the polls rather than holding up the start.
    const pinging = Effect.forever(
      Effect.zipRight(sql`SELECT pg_notify(${channel}, ${ping})`, Effect.sleep("50 millis"))
    )
    yield* Effect.raceFirst(Deferred.await(listening), pinging).pipe(
      Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => "no answer within 10 s" }),
      // Real time, not the Clock's: it bounds a start, and a test's clock need not move for it.
      Effect.withClock(Clock.make()),
      Effect.catchAll((e) => Effect.logWarning("Job wake-ups are not listened to yet; workers poll until they are", e))
    )
    return {
      /** Wakes a worker of `kind` wherever one idles; a failure to notify leaves the job to the polls. */
      wake: (kind: string) =>
        sql`SELECT pg_notify(${channel}, ${kind})`.pipe(
          Effect.asVoid,
          Effect.catchAll((e) => Effect.logWarning(`Could not notify ${kind} workers; they will poll`, e))
        ),
      /** Wakes another idle worker of `kind` here, as one that has just claimed a job does: there may be more. */
      relay: signal,
      /** Waits for a wake-up of `kind` or the poll interval, whichever comes first: a loop's rest. */
      idle: (kind: string, poll: Duration.DurationInput) =>
        Effect.flatMap(queueOf(kind), (queue) => Effect.ignore(Effect.timeout(Queue.take(queue), poll))),
      /** Waits for a wake-up of `kind` only: a notification or a relay (an idle worker while another polls). */
      waitForJob: (kind: string) => Effect.flatMap(queueOf(kind), Queue.take)
    }
  })
}) {}
