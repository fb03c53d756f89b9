import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Cause, Clock, Duration, Effect, Exit, Option, Schema } from "effect"
import { randomBytes } from "node:crypto"
import { hostname } from "node:os"
import { withRequestSpan } from "../http/RequestSpan.js"
import { BackgroundStart } from "./BackgroundStart.js"
import { JobWakeup } from "./JobWakeup.js"

export const LeaseRow = Schema.Struct({
  name: Schema.String,
  holder: Schema.String,
  lease_until: Schema.DateFromSelf,
  last_run_at: Schema.NullOr(Schema.DateFromSelf),
  last_error: Schema.NullOr(Schema.String)
})
export type LeaseRow = typeof LeaseRow.Type

/** A holder name unique to one loop of one process: host, pid and a random tag. */
export const leaseHolder = () => `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
const later = (by: Duration.Duration) =>
  Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms + Duration.toMillis(by)))

/**
 * Named leases in the database, so that one replica runs each piece of background work (the
 * signal engine, the schedulers, the purges) while the others stand by. A lease runs until
 * `lease_until`; once that has passed, anyone may take it. The row also notes how its holder's
 * last pass went, for status reads.
 */
export class Leases extends Effect.Service<Leases>()("@trading-platform/core/Leases", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Takes or renews the lease for `duration`; false while another holder's lease runs. */
    const acquire = (name: string, holder: string, duration: Duration.Duration) =>
      Effect.gen(function*() {
        const [at, until] = [yield* now, yield* later(duration)]
        const rows = yield* sql`
          INSERT INTO leases (name, holder, lease_until) VALUES (${name}, ${holder}, ${until})
          ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, lease_until = EXCLUDED.lease_until
          WHERE leases.holder = EXCLUDED.holder OR leases.lease_until <= ${at}
          RETURNING name`
        return rows.length > 0
      })

    /**
     * Claims the current round of `name`, which lasts `every`: true for the one claim (of every
     * replica, the holder's own included) that opens a round, false until that round is over.
     */
    const claimRound = (name: string, holder: string, every: Duration.Duration) =>
      Effect.gen(function*() {
        const [at, until] = [yield* now, yield* later(every)]
        const rows = yield* sql`
          INSERT INTO leases (name, holder, lease_until) VALUES (${name}, ${holder}, ${until})
          ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, lease_until = EXCLUDED.lease_until
          WHERE leases.lease_until <= ${at}
          RETURNING name`
        return rows.length > 0
      })

    /**
     * Inside a transaction: locks the lease row while it is the holder's and unexpired, so no
     * takeover can commit before the transaction does; false when the lease is lost.
     */
    const holds = (name: string, holder: string) =>
      Effect.flatMap(now, (at) =>
        Effect.map(
          sql`SELECT holder FROM leases WHERE name = ${name} AND holder = ${holder} AND lease_until > ${at} FOR UPDATE`,
          (rows) => rows.length > 0
        ))

    /** Notes how the holder's last pass went. */
    const record = (name: string, holder: string, error: string | null) =>
      Effect.flatMap(
        now,
        (at) =>
          sql`UPDATE leases SET last_run_at = ${at}, last_error = ${error} WHERE name = ${name} AND holder = ${holder}`
      )
        .pipe(Effect.asVoid)

    /** Lets the lease go at once, so another replica need not wait for it to run out. */
    const release = (name: string, holder: string) =>
      Effect.flatMap(
        now,
        (at) =>
          sql`UPDATE leases SET lease_until = ${at} WHERE name = ${name} AND holder = ${holder} AND lease_until > ${at}`
      )
        .pipe(Effect.asVoid)

    const find = SqlSchema.findOne({
      Request: Schema.String,
      Result: LeaseRow,
      execute: (name) => sql`SELECT * FROM leases WHERE name = ${name}`
    })

    return { acquire, claimRound, holds, record, release, find } as const
  })
}) {}

/**
 * The loop both kinds of background work share: a scoped fiber that, at start (once
 * `BackgroundStart` lets it) and then after each `rest` (a sleep on the Clock), runs `pass` when
 * `claim` wins, records the outcome in the lease row and logs a failure; the next pass tries again.
 */
const claimedLoop = <E, R>(
  name: string,
  holder: string,
  rest: Effect.Effect<void>,
  claim: Effect.Effect<boolean, unknown>,
  pass: Effect.Effect<void, E, R>
) =>
  Effect.gen(function*() {
    const leases = yield* Leases
    const once = Effect.gen(function*() {
      if (!(yield* claim)) return
      const outcome = yield* Effect.exit(pass)
      const error = Exit.isSuccess(outcome) || Cause.isInterruptedOnly(outcome.cause)
        ? null
        : Cause.pretty(outcome.cause).split("\n")[0]!
      if (error !== null) yield* Effect.logWarning(`${name} failed`, error)
      yield* leases.record(name, holder, error)
    }).pipe(
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause) ? Effect.failCause(cause) : Effect.logWarning(`${name} could not run`, cause)
      ),
      withRequestSpan(`Leases.${name}`)
    )
    const start = yield* BackgroundStart
    yield* Effect.forkScoped(Effect.zipRight(start, Effect.forever(Effect.zipRight(once, rest))))
  })

/**
 * Runs `pass` every `interval` (from one pass's start to the next's) while this instance holds the
 * lease `name` (held for the longer of `lease` and two intervals, renewed by the first pass after
 * half of it has gone, so a holder between passes keeps it; handed back when the scope closes, so
 * another replica takes over at once). With `rest`, a pass follows each `rest` instead, which must
 * end within `interval` (a loop that sleeps until its next piece of work, or until woken).
 */
export const leasedLoop = <E, R>(
  name: string,
  options: {
    readonly interval: Duration.Duration
    readonly lease: Duration.Duration
    readonly rest?: Effect.Effect<void>
  },
  pass: Effect.Effect<void, E, R>
) =>
  Effect.gen(function*() {
    const leases = yield* Leases
    const holder = leaseHolder()
    const duration = Duration.max(options.lease, Duration.times(options.interval, 2))
    // Nobody takes a lease before it runs out, so while more than half of it is left (on this
    // Clock) a pass needs no renewal: a fast loop writes its lease twice a lease, not every pass.
    let heldUntil = 0
    const renew = Effect.gen(function*() {
      const at = yield* Clock.currentTimeMillis
      if (at < heldUntil - Duration.toMillis(duration) / 2) return true
      const held = yield* leases.acquire(name, holder, duration)
      heldUntil = held ? at + Duration.toMillis(duration) : 0
      return held
    })
    // Passes keep a rate: the next is due an interval after this one started (a time on the Clock,
    // not a length after it ended), so a slow pass, or a clock moved while it ran, does not push it back.
    const interval = Duration.toMillis(options.interval)
    let nextPassAt: number | undefined
    const timed = Effect.zipRight(Effect.map(Clock.currentTimeMillis, (at) => void (nextPassAt = at + interval)), pass)
    const untilDue = Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const due = nextPassAt ?? now + interval
      nextPassAt = undefined
      return Effect.sleep(Duration.millis(Math.max(0, due - now)))
    })
    // Added before the loop's fiber, so it runs after that fiber is stopped.
    yield* Effect.addFinalizer(() => Effect.ignore(leases.release(name, holder)))
    yield* claimedLoop(name, holder, options.rest ?? untilDue, renew, timed)
  })

/**
 * A leased loop that sleeps between passes until the time its last pass answered (on the Clock: a
 * time, not a length, so a pass that took long, or a clock that moved meanwhile, does not push it
 * back), at most `poll`, or until the `JobWakeup` of `wakeOn` wakes it (the database sends one when
 * the loop may have new work). A loop whose pass did not run (another replica holds the lease, or
 * it failed) rests for `poll`.
 */
export const wokenLoop = <E, R>(
  name: string,
  options: { readonly poll: Duration.Duration; readonly lease: Duration.Duration; readonly wakeOn: string },
  pass: Effect.Effect<number, E, R>
) =>
  Effect.gen(function*() {
    const wakeup = yield* JobWakeup
    const poll = Duration.toMillis(options.poll)
    let nextPassAt: number | undefined
    const rest = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const millis = nextPassAt === undefined ? poll : Math.min(poll, Math.max(0, nextPassAt - now))
      nextPassAt = undefined
      yield* wakeup.idle(options.wakeOn, Duration.millis(millis))
    })
    const passed = Effect.map(pass, (at) => {
      nextPassAt = at
    })
    yield* leasedLoop(name, { interval: options.poll, lease: options.lease, rest }, passed)
  })

/**
 * Runs `task` once per `every` across all replicas: whichever instance first claims a round runs
 * it, and nobody runs the task again until the round is over.
 */
export const runPeriodic = <E, R>(name: string, every: Duration.Duration, task: Effect.Effect<void, E, R>) =>
  Effect.gen(function*() {
    const leases = yield* Leases
    const holder = leaseHolder()
    yield* claimedLoop(name, holder, Effect.sleep(every), leases.claimRound(name, holder, every), task)
  })

/**
 * A retention purge: once per `every` across all replicas, `purge` deletes what is older than
 * `keep` before now on the Clock (its argument); nothing runs when `keep` is not set.
 */
export const purgeOlderThan = <E, R>(
  name: string,
  every: Duration.Duration,
  keep: Option.Option<Duration.Duration>,
  purge: (before: Date) => Effect.Effect<unknown, E, R>
) =>
  Option.match(keep, {
    onNone: () => Effect.void,
    onSome: (kept) =>
      runPeriodic(
        name,
        every,
        Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.asVoid(purge(new Date(now - Duration.toMillis(kept)))))
      )
  })
