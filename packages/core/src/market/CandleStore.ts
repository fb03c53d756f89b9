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

const day = 86_400_000
/** Bytes of a packed bar: six doubles (open time, open, high, low, close, volume). */
const barBytes = 6 * 8

/** A day's bars (sorted by time) as the bytes of `candle_days.data`: little-endian doubles. */
const pack = (bars: ReadonlyArray<Candle>): Uint8Array => {
  const view = new DataView(new ArrayBuffer(bars.length * barBytes))
  bars.forEach((b, i) => {
    const at = i * barBytes
    view.setFloat64(at, b.time, true)
    view.setFloat64(at + 8, b.open, true)
    view.setFloat64(at + 16, b.high, true)
    view.setFloat64(at + 24, b.low, true)
    view.setFloat64(at + 32, b.close, true)
    view.setFloat64(at + 40, b.volume, true)
  })
  return new Uint8Array(view.buffer)
}

/** The bars of a day's bytes with open time in `span`, appended to `out`. */
const unpack = (data: Uint8Array, span: Span, out: Array<Candle>) => {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength)
  for (let at = 0; at < data.byteLength; at += barBytes) {
    const time = view.getFloat64(at, true)
    if (time < span.start || time >= span.end) continue
    out.push({
      time,
      open: view.getFloat64(at + 8, true),
      high: view.getFloat64(at + 16, true),
      low: view.getFloat64(at + 24, true),
      close: view.getFloat64(at + 32, true),
      volume: view.getFloat64(at + 40, true)
    })
  }
  return out
}

/** The UTC days a span's open times fall on, as the first and the last day's start. */
const daysOf = (span: Span) => ({
  first: Math.floor(span.start / day) * day,
  last: Math.floor((span.end - 1) / day) * day
})

/**
 * SQL of the candle store (migrations 0016 and 0020): series, their bars (a UTC day of bars to a
 * row, packed), funding payments, and the spans they cover.
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

    const daysIn = (seriesId: number, span: Span) => {
      const { first, last } = daysOf(span)
      return sql<{ data: Uint8Array }>`
        SELECT data FROM candle_days WHERE series_id = ${seriesId} AND day >= ${first} AND day <= ${last} ORDER BY day`
    }

    /** Bars with open time in `[start, end)`, oldest first. */
    const read = (seriesId: number, span: Span) =>
      daysIn(seriesId, span).pipe(
        Effect.map((rows) => {
          const out: Array<Candle> = []
          for (const row of rows) unpack(row.data, span, out)
          return out
        }),
        dieOnStorageFailure
      )

    /**
     * Writes bars: each day they fall on is read (locked), merged with them (a bar of the same open
     * time is replaced) and written back whole, in one transaction, so writing the same bars twice
     * changes nothing and concurrent writers of one day wait for each other.
     */
    const write = (seriesId: number, bars: ReadonlyArray<Candle>) => {
      if (bars.length === 0) return Effect.void
      const byDay = new Map<number, Map<number, Candle>>()
      for (const bar of bars) {
        const d = Math.floor(bar.time / day) * day
        let held = byDay.get(d)
        if (held === undefined) byDay.set(d, held = new Map())
        held.set(bar.time, bar)
      }
      const days = [...byDay.keys()]
      return sql.withTransaction(Effect.gen(function*() {
        const stored = yield* sql<{ day: number | string; data: Uint8Array }>`
          SELECT day, data FROM candle_days WHERE series_id = ${seriesId} AND day IN ${sql.in(days)} FOR UPDATE`
        const held = new Map(stored.map((r) => [Number(r.day), r.data] as const))
        const rows = days.map((d) => {
          const merged = new Map<number, Candle>()
          const old = held.get(d)
          if (old !== undefined) {
            for (const bar of unpack(old, { start: d, end: d + day }, [])) merged.set(bar.time, bar)
          }
          for (const [time, bar] of byDay.get(d)!) merged.set(time, bar)
          const sorted = [...merged.values()].sort((a, b) => a.time - b.time)
          return { series_id: seriesId, day: d, bars: sorted.length, data: pack(sorted) }
        })
        for (const part of chunks(rows, batch)) {
          yield* sql`
            INSERT INTO candle_days ${sql.insert(part)}
            ON CONFLICT (series_id, day) DO UPDATE SET bars = excluded.bars, data = excluded.data`
        }
      })).pipe(dieOnStorageFailure)
    }

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
    const count = (seriesId: number, span: Span) => Effect.map(read(seriesId, span), (bars) => bars.length)

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
      Effect.gen(function*() {
        const [totals] = yield* sql<{ bars: number | string | null }>`
          SELECT sum(bars) AS bars FROM candle_days WHERE series_id = ${seriesId}`
        // Only the first day's first open time and the last day's last (a day's bars are sorted): a
        // day of one-minute bars is 69 KB, and a dataset's candle reads ask for its last bar each time.
        const ends = yield* sql<{ time: Uint8Array }>`
          (SELECT substring(data from 1 for 8) AS time FROM candle_days WHERE series_id = ${seriesId} ORDER BY day LIMIT 1)
          UNION ALL
          (SELECT substring(data from octet_length(data) - ${barBytes - 1} for 8) AS time FROM candle_days
            WHERE series_id = ${seriesId} ORDER BY day DESC LIMIT 1)`
        const timeOf = (row: { time: Uint8Array } | undefined) =>
          row === undefined || row.time.byteLength < 8
            ? null
            : new DataView(row.time.buffer, row.time.byteOffset, 8).getFloat64(0, true)
        return { first: timeOf(ends[0]), last: timeOf(ends[1]), bars: Number(totals?.bars ?? 0) }
      }).pipe(dieOnStorageFailure)

    return { series, existing, read, count, write, readFunding, writeFunding, coverage, cover, extent } as const
  })
}) {}

/** Rows per insert statement (days of bars, or funding payments as arrays). */
const batch = 1_000

const chunks = <A>(all: ReadonlyArray<A>, size: number): Array<ReadonlyArray<A>> =>
  Array.from({ length: Math.ceil(all.length / size) }, (_, i) => all.slice(i * size, (i + 1) * size))
