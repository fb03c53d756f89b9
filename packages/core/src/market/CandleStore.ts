import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import type { Candle, FundingRate, Timeframe } from "../venues/Venue.js"

/**
 * One series: a venue's (or, with `datasetId`, a user's imported dataset's) bars of a timeframe, or
 * (`funding`) a venue's funding payments of the symbol.
 */
export interface SeriesKey {
  readonly venue: string
  readonly symbol: string
  readonly timeframe: Timeframe | "funding"
  readonly datasetId?: number
}

/** A span of open times, `[start, end)` in epoch ms. */
export interface Span {
  readonly start: number
  readonly end: number
}

interface BarRow {
  readonly time: number | string
  readonly open: number
  readonly high: number
  readonly low: number
  readonly close: number
  readonly volume: number
}

/** node-postgres answers `bigint` as a string, PGlite as a number. */
const toCandle = (r: BarRow): Candle => ({
  time: Number(r.time),
  open: r.open,
  high: r.high,
  low: r.low,
  close: r.close,
  volume: r.volume
})

/**
 * SQL of the candle store (migration 0016): series, their bars and the spans they cover. Bars are
 * written as whole columns through `unnest`, one statement for any number of rows, and re-written
 * bars replace the old ones, so writing the same bars twice changes nothing.
 */
export class CandleStore extends Effect.Service<CandleStore>()("@trading-platform/core/CandleStore", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const find = (key: SeriesKey) =>
      key.datasetId === undefined
        ? sql<{ id: number }>`
          SELECT id FROM candle_series
          WHERE venue = ${key.venue} AND symbol = ${key.symbol} AND timeframe = ${key.timeframe} AND dataset_id IS NULL`
        : sql<{ id: number }>`
          SELECT id FROM candle_series WHERE dataset_id = ${key.datasetId} AND timeframe = ${key.timeframe}`

    /** The series' id, created on first use (a concurrent creator's row is found, not duplicated). */
    const series = (key: SeriesKey) =>
      Effect.gen(function*() {
        const [found] = yield* find(key)
        if (found) return found.id
        yield* sql`
          INSERT INTO candle_series ${
          sql.insert({
            venue: key.venue,
            symbol: key.symbol,
            timeframe: key.timeframe,
            dataset_id: key.datasetId ?? null
          })
        } ON CONFLICT DO NOTHING`
        const [created] = yield* find(key)
        return created!.id
      }).pipe(dieOnStorageFailure)

    /** The series' id when it exists. */
    const existing = (key: SeriesKey) => Effect.map(find(key), (rows) => rows[0]?.id).pipe(dieOnStorageFailure)

    /** Bars with open time in `[start, end)`, oldest first. */
    const read = (seriesId: number, span: Span) =>
      sql<BarRow>`
        SELECT time, open, high, low, close, volume FROM candles
        WHERE series_id = ${seriesId} AND time >= ${span.start} AND time < ${span.end}
        ORDER BY time`.pipe(Effect.map((rows) => rows.map(toCandle)), dieOnStorageFailure)

    /** Upserts bars, in statements of at most `batch` rows so one statement's parameters stay small. */
    const write = (seriesId: number, bars: ReadonlyArray<Candle>) =>
      Effect.forEach(chunks(bars, batch), (part) =>
        sql`
          INSERT INTO candles (series_id, time, open, high, low, close, volume)
          SELECT ${seriesId}, * FROM unnest(
            ${part.map((b) => b.time)}::bigint[], ${part.map((b) => b.open)}::float8[],
            ${part.map((b) => b.high)}::float8[], ${part.map((b) => b.low)}::float8[],
            ${part.map((b) => b.close)}::float8[], ${part.map((b) => b.volume)}::float8[])
          ON CONFLICT (series_id, time) DO UPDATE SET
            open = excluded.open, high = excluded.high, low = excluded.low, close = excluded.close,
            volume = excluded.volume`, { discard: true }).pipe(dieOnStorageFailure)

    /** Funding payments with time in `[start, end)`, oldest first. */
    const readFunding = (seriesId: number, span: Span) =>
      sql<{ time: number | string; rate: number }>`
        SELECT time, rate FROM funding_rates
        WHERE series_id = ${seriesId} AND time >= ${span.start} AND time < ${span.end}
        ORDER BY time`.pipe(
        Effect.map((rows): Array<FundingRate> => rows.map((r) => ({ time: Number(r.time), rate: r.rate }))),
        dieOnStorageFailure
      )

    /** Upserts funding payments. */
    const writeFunding = (seriesId: number, rates: ReadonlyArray<FundingRate>) =>
      Effect.forEach(chunks(rates, batch), (part) =>
        sql`
          INSERT INTO funding_rates (series_id, time, rate)
          SELECT ${seriesId}, * FROM unnest(${part.map((r) => r.time)}::bigint[], ${part.map((r) => r.rate)}::float8[])
          ON CONFLICT (series_id, time) DO UPDATE SET rate = excluded.rate`, { discard: true }).pipe(
          dieOnStorageFailure
        )

    /** How many bars of the series have an open time in `[start, end)`. */
    const count = (seriesId: number, span: Span) =>
      sql<{ bars: number | string }>`
        SELECT count(*) AS bars FROM candles WHERE series_id = ${seriesId} AND time >= ${span.start} AND time < ${span.end}`
        .pipe(Effect.map(([r]) => Number(r?.bars ?? 0)), dieOnStorageFailure)

    /** The covered spans that meet `[start, end)`, oldest first. */
    const coverage = (seriesId: number, span: Span) =>
      sql<{ start_time: number | string; end_time: number | string }>`
        SELECT start_time, end_time FROM candle_coverage
        WHERE series_id = ${seriesId} AND end_time >= ${span.start} AND start_time <= ${span.end}
        ORDER BY start_time`.pipe(
        Effect.map((rows): Array<Span> => rows.map((r) => ({ start: Number(r.start_time), end: Number(r.end_time) }))),
        dieOnStorageFailure
      )

    /** Records `span` as covered, merged with the spans it meets into one row. */
    const cover = (seriesId: number, span: Span) =>
      sql.withTransaction(Effect.gen(function*() {
        const met = yield* sql<{ start_time: number | string; end_time: number | string }>`
          DELETE FROM candle_coverage
          WHERE series_id = ${seriesId} AND end_time >= ${span.start} AND start_time <= ${span.end}
          RETURNING start_time, end_time`
        const start = Math.min(span.start, ...met.map((r) => Number(r.start_time)))
        const end = Math.max(span.end, ...met.map((r) => Number(r.end_time)))
        yield* sql`
          INSERT INTO candle_coverage (series_id, start_time, end_time) VALUES (${seriesId}, ${start}, ${end})
          ON CONFLICT (series_id, start_time) DO UPDATE SET end_time = greatest(candle_coverage.end_time, excluded.end_time)`
      })).pipe(dieOnStorageFailure)

    /** The first and last open time and the count of a series' bars. */
    const extent = (seriesId: number) =>
      sql<{ first: number | string | null; last: number | string | null; bars: number | string }>`
        SELECT min(time) AS first, max(time) AS last, count(*) AS bars FROM candles WHERE series_id = ${seriesId}`
        .pipe(
          Effect.map(([r]) => ({
            first: r?.first == null ? null : Number(r.first),
            last: r?.last == null ? null : Number(r.last),
            bars: Number(r?.bars ?? 0)
          })),
          dieOnStorageFailure
        )

    return { series, existing, read, count, write, readFunding, writeFunding, coverage, cover, extent } as const
  })
}) {}

/** Rows per insert statement: six arrays of this length are its parameters. */
const batch = 50_000

const chunks = <A>(all: ReadonlyArray<A>, size: number): Array<ReadonlyArray<A>> =>
  Array.from({ length: Math.ceil(all.length / size) }, (_, i) => all.slice(i * size, (i + 1) * size))
