import type { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect, Layer } from "effect"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { Unavailable } from "../http/Errors.js"
import { invalidField } from "../http/InvalidField.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { cancelUnfinished } from "../jobs/JobQueue.js"
import { JobWakeup } from "../jobs/JobWakeup.js"
import { JobFailed, type JobLease, type JobStopped, runJobWorkers } from "../jobs/JobWorkers.js"
import { fromDecodedRow } from "../sql/Columns.js"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import { now } from "../time/Now.js"
import type { Owner } from "../users/Ownership.js"
import { ownedBy } from "../users/Ownership.js"
import { timeframeMillis, type UnknownSymbol, type VenueFailure, Venues } from "../venues/Venue.js"
import { wallClock } from "../venues/VenueHttp.js"
import { CandleSync, type CandleSyncId, type CandleSyncRequest } from "./CandleSync.js"
import { candleSyncJobs, CandleSyncRow, CandleSyncsRepo } from "./CandleSyncsRepo.js"
import { MarketData, venuePageBars } from "./MarketData.js"

/** The most bars one sync may span: ten years of one-minute bars. */
export const maxSyncBars = 10 * 525_600

/** Waits a venue may ask for (429/503) on one page before the attempt is handed back. */
const waitsPerPage = 5

const iso = (ms: number) => new Date(ms).toISOString()

const toCandleSync = (row: CandleSyncRow) =>
  new CandleSync({
    id: row.id,
    exchange: row.exchange,
    symbol: row.symbol,
    timeframe: row.timeframe,
    from: iso(row.from_time),
    to: iso(row.to_time),
    status: row.status,
    progress: row.progress,
    result: row.result,
    error: row.status === "failed" || row.status === "cancelled" ? row.error : null,
    created_at: row.created_at
  }, fromDecodedRow)

/** Candle syncs as durable jobs: a venue's bars of a range fetched into the store, within its rate limits. */
export class CandleSyncs extends Effect.Service<CandleSyncs>()("@trading-platform/core/CandleSyncs", {
  effect: Effect.gen(function*() {
    const repo = yield* CandleSyncsRepo
    const { maxQueuedJobsPerUser } = yield* PlatformConfig
    const market = yield* MarketData
    const venues = yield* Venues
    const wakeup = yield* JobWakeup

    const owned = (caller: Owner, id: CandleSyncId) => repo.findById(id).pipe(ownedBy(caller, `Candle sync ${id}`))

    const submit = (caller: Owner, request: CandleSyncRequest) =>
      Effect.gen(function*() {
        const from = Date.parse(request.from)
        const to = Date.parse(request.to)
        if (!(from < to)) return yield* invalidField("to", "must be after from")
        if ((to - from) / timeframeMillis[request.timeframe] > maxSyncBars) {
          return yield* invalidField("to", `must be at most ${maxSyncBars} bars of the timeframe after from`)
        }
        if (venues[request.exchange].simulated) {
          return yield* invalidField(
            "exchange",
            `is simulated here: its candles are computed, not fetched (set ${request.exchange.toUpperCase()}_MODE=http to sync from the venue)`
          )
        }
        yield* market.check({ _tag: "Venue", exchange: request.exchange }, request.symbol, request.timeframe)
        const row = yield* repo.jobs.admit(
          caller.id,
          maxQueuedJobsPerUser,
          repo.insert({
            user_id: caller.id,
            exchange: request.exchange,
            symbol: request.symbol,
            timeframe: request.timeframe,
            from_time: from,
            to_time: to,
            now: yield* now
          })
        )
        yield* wakeup.wake(candleSyncJobs.table)
        return toCandleSync(row)
      }).pipe(
        dieOnStorageFailure,
        withRequestSpan("CandleSyncs.submit", { attributes: { userId: caller.id, symbol: request.symbol } })
      )

    const get = (caller: Owner, id: CandleSyncId) =>
      owned(caller, id).pipe(
        Effect.map(toCandleSync),
        dieOnStorageFailure,
        withRequestSpan("CandleSyncs.get", { attributes: { userId: caller.id, syncId: id } })
      )

    const cancel = (caller: Owner, id: CandleSyncId) =>
      Effect.gen(function*() {
        yield* owned(caller, id)
        return toCandleSync(yield* cancelUnfinished(repo.jobs, id, `Candle sync ${id}`, yield* now, CandleSyncRow))
      }).pipe(
        dieOnStorageFailure,
        withRequestSpan("CandleSyncs.cancel", { attributes: { userId: caller.id, syncId: id } })
      )

    return { submit, get, cancel } as const
  }),
  dependencies: [CandleSyncsRepo.Default]
}) {}

/**
 * The candle sync workers of this instance (see `runJobWorkers`). A job walks its range a page of
 * `venuePageBars` at a time, checkpointing before each: `MarketData.sync` stores each page and
 * records it covered, so a job taken over after a crash, or run again over the same range, asks
 * the venue only for what is not stored yet. A venue that answers 429 or 503 is waited out for
 * its `Retry-After` (in real time, doubling from 1 s without one), up to `waitsPerPage` times a page.
 */
export const CandleSyncWorkersLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const { venues: options } = yield* PlatformConfig
    const repo = yield* CandleSyncsRepo
    const market = yield* MarketData

    const run = (row: CandleSyncRow, lease: JobLease) =>
      Effect.gen(function*() {
        const step = timeframeMillis[row.timeframe]
        const first = Math.ceil(row.from_time / step) * step
        const pageMs = venuePageBars * step
        let waits = 0
        const page = (
          start: number,
          waited: number
        ): Effect.Effect<number, VenueFailure | UnknownSymbol | JobStopped | SqlError> =>
          market.sync(row.exchange, {
            symbol: row.symbol,
            timeframe: row.timeframe,
            start,
            end: Math.min(row.to_time, start + pageMs)
          }).pipe(
            Effect.catchIf(
              (e): e is Unavailable => e instanceof Unavailable && waited < waitsPerPage,
              (e) => {
                waits++
                const pause = Duration.seconds(e.retry_after ?? 2 ** waited)
                return Effect.sleep(pause).pipe(
                  Effect.withClock(wallClock),
                  lease.keepAlive,
                  Effect.zipRight(page(start, waited + 1))
                )
              }
            )
          )
        let bars = 0
        for (let start = first; start < row.to_time; start += pageMs) {
          yield* lease.checkpoint((start - first) / (row.to_time - first))
          bars += yield* page(start, 0)
        }
        return { bars, waits }
      }).pipe(
        Effect.catchTag("UnknownSymbol", (e) =>
          Effect.fail(new JobFailed({ message: `Unknown symbol on ${row.exchange}: ${e.symbol}` })))
      )

    yield* runJobWorkers({ kind: candleSyncJobs.table, queue: repo.jobs, options: options.candleSyncs, run })
  })
)
