import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Cause, Clock, Duration, Effect, Exit, Schema } from "effect"
import { randomBytes } from "node:crypto"
import { hostname } from "node:os"
import { IsoTimestamp } from "../sql/Columns.js"

export const LeaseRow = Schema.Struct({
  name: Schema.String,
  holder: Schema.String,
  lease_until: IsoTimestamp,
  last_run_at: Schema.NullOr(IsoTimestamp),
  last_error: Schema.NullOr(Schema.String)
})
export type LeaseRow = typeof LeaseRow.Type

/**
 * Named leases in the database, so that one replica runs a background loop (the automation
 * scheduler, the PnL refresher) while the others stand by and take over when it stops renewing.
 */
export class BackgroundLeases extends Effect.Service<BackgroundLeases>()("@trading-platform/core/BackgroundLeases", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Takes or renews the lease until `until`; false while another holder's lease runs. */
    const acquire = (name: string, holder: string, now: Date, until: Date) =>
      Effect.map(
        sql`
          INSERT INTO background_leases (name, holder, lease_until) VALUES (${name}, ${holder}, ${until})
          ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, lease_until = EXCLUDED.lease_until
          WHERE background_leases.holder = EXCLUDED.holder OR background_leases.lease_until < ${now}
          RETURNING name`,
        (rows) => rows.length > 0
      )

    /** Notes how the holder's last pass went (for status reads). */
    const record = (name: string, holder: string, at: Date, error: string | null) =>
      sql`
        UPDATE background_leases SET last_run_at = ${at}, last_error = ${error}
        WHERE name = ${name} AND holder = ${holder}`.pipe(Effect.asVoid)

    /** Lets the lease go at once, so another replica need not wait for it to expire. */
    const release = (name: string, holder: string, now: Date) =>
      sql`UPDATE background_leases SET lease_until = ${now} WHERE name = ${name} AND holder = ${holder}`.pipe(
        Effect.asVoid
      )

    const find = SqlSchema.findOne({
      Request: Schema.String,
      Result: LeaseRow,
      execute: (name) => sql`SELECT * FROM background_leases WHERE name = ${name}`
    })

    return { acquire, record, release, find } as const
  })
}) {}

/**
 * Runs `pass` every `interval` on the Effect clock while this instance holds the lease `name`
 * (renewed by each pass for the longer of `lease` and two intervals, given up when the scope closes). A failed pass is logged and recorded;
 * the loop goes on.
 */
export const leasedLoop = <E, R>(
  name: string,
  options: { readonly interval: Duration.Duration; readonly lease: Duration.Duration },
  pass: Effect.Effect<void, E, R>
) =>
  Effect.gen(function*() {
    const leases = yield* BackgroundLeases
    const holder = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
    // The lease outlives two passes, so a holder that is merely between passes keeps it.
    const leaseMillis = Math.max(Duration.toMillis(options.lease), 2 * Duration.toMillis(options.interval))
    const once = Effect.gen(function*() {
      const at = yield* now
      if (!(yield* leases.acquire(name, holder, at, new Date(at.getTime() + leaseMillis)))) return
      const outcome = yield* Effect.exit(pass)
      const error = Exit.isSuccess(outcome) || Cause.isInterruptedOnly(outcome.cause)
        ? null
        : Cause.pretty(outcome.cause).split("\n")[0]!
      if (error !== null) yield* Effect.logWarning(`${name} failed`, error)
      yield* leases.record(name, holder, yield* now, error)
    }).pipe(Effect.catchAllCause((cause) => Effect.logWarning(`${name} could not run`, cause)))
    yield* Effect.addFinalizer(() => Effect.ignore(Effect.flatMap(now, (at) => leases.release(name, holder, at))))
    yield* Effect.forkScoped(Effect.forever(Effect.zipRight(once, Effect.sleep(options.interval))))
  })
