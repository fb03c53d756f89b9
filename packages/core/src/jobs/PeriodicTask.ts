import * as SqlClient from "@effect/sql/SqlClient"
import { Cause, Clock, Duration, Effect } from "effect"

/**
 * Claims the current round of the periodic task `name`: true for the one instance (of every
 * replica on this database) whose claim moves the task's next run `every` ahead; false while a
 * round claimed by anyone is not over.
 */
export const claimRound = (name: string, every: Duration.Duration) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const now = yield* Clock.currentTimeMillis
    const rows = yield* sql`
      INSERT INTO periodic_tasks (name, next_run_at) VALUES (${name}, ${new Date(now + Duration.toMillis(every))})
      ON CONFLICT (name) DO UPDATE SET next_run_at = EXCLUDED.next_run_at
      WHERE periodic_tasks.next_run_at <= ${new Date(now)}
      RETURNING name`
    return rows.length > 0
  })

/**
 * Background work that runs once per `every` across all replicas: a scoped fiber (stopped with
 * the layer) that tries to claim a round at start and then every `every` on the `Clock`, and runs
 * `task` when its claim wins. A failed round is logged and the next one tries again.
 */
export const runPeriodic = <R>(name: string, every: Duration.Duration, task: Effect.Effect<void, unknown, R>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const round = claimRound(name, every).pipe(
      Effect.flatMap((won) => (won ? task : Effect.void)),
      Effect.provideService(SqlClient.SqlClient, sql),
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause)
          ? Effect.failCause(cause)
          : Effect.logWarning(`Periodic task ${name} failed; next round in ${Duration.format(every)}`, cause)
      ),
      Effect.withSpan(`PeriodicTask.${name}`)
    )
    yield* Effect.forkScoped(Effect.forever(Effect.zipRight(round, Effect.sleep(every))))
  })
