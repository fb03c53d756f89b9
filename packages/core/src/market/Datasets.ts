import { Effect, Option, Stream } from "effect"
import { Conflict, InvalidInput, PayloadTooLarge } from "../http/Errors.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { now } from "../time/Now.js"
import type { Owner } from "../users/Ownership.js"
import { ownedBy } from "../users/Ownership.js"
import { type Candle, timeframeMillis } from "../venues/Venue.js"
import { CandleFileUnreadable, type CandleProblem, parseCandles } from "./CandleCsv.js"
import { CandleStore, type Span } from "./CandleStore.js"
import { type CandleImportParams, CandleImportResult, Dataset, type DatasetId, DatasetsResponse } from "./Dataset.js"
import { type DatasetRow, DatasetsRepo } from "./DatasetsRepo.js"

/** The largest candle file an import reads (a year of one-minute bars in the venues' dump layout is about 60 MiB). */
export const maxImportBytes = 512 * 1024 * 1024

/** Problems an answer lists; the rest are counted. */
const listedProblems = 1_000

/** One file of an import: its bytes as they stream in, and its name (inside a zip, the entries' names). */
export interface ImportFile<E> {
  readonly bytes: Stream.Stream<Uint8Array, E>
  readonly name?: string
}

/** The runs of consecutive bars in `bars` (sorted by time): the spans the import covers. */
const runs = (bars: ReadonlyArray<Candle>, step: number): Array<Span> => {
  const spans: Array<Span> = []
  for (const bar of bars) {
    const last = spans[spans.length - 1]
    if (last !== undefined && last.end === bar.time) (last as { end: number }).end = bar.time + step
    else spans.push({ start: bar.time, end: bar.time + step })
  }
  return spans
}

/** Counts the bytes that pass into `read`, and fails once more than `maxImportBytes` have (over all files). */
const capped = <E>(bytes: Stream.Stream<Uint8Array, E>, read: { bytes: number }) =>
  Stream.mapEffect(bytes, (chunk) => {
    read.bytes += chunk.length
    return read.bytes > maxImportBytes
      ? Effect.fail(new PayloadTooLarge({ error: `The candle files exceed ${maxImportBytes} bytes` }))
      : Effect.succeed(chunk)
  })

/**
 * Users' imported candles: each dataset is one symbol's bars on one timeframe under a name, traded
 * by its venue's rules, read wherever an `exchange` is taken as `dataset:NAME`.
 */
export class Datasets extends Effect.Service<Datasets>()("@trading-platform/core/Datasets", {
  effect: Effect.gen(function*() {
    const repo = yield* DatasetsRepo
    const store = yield* CandleStore

    const seriesKey = (row: DatasetRow) => ({
      venue: row.venue,
      symbol: row.symbol,
      timeframe: row.timeframe,
      datasetId: row.id
    })

    const describe = (row: DatasetRow) =>
      Effect.gen(function*() {
        const id = yield* store.existing(seriesKey(row))
        const extent = id === undefined ? { first: null, last: null, bars: 0 } : yield* store.extent(id)
        const iso = (ms: number | null) => ms === null ? null : new Date(ms).toISOString()
        return new Dataset({
          id: row.id,
          name: row.name,
          venue: row.venue,
          symbol: row.symbol,
          timeframe: row.timeframe,
          bars: extent.bars,
          first: iso(extent.first),
          last: iso(extent.last),
          created_at: row.created_at,
          updated_at: row.updated_at
        })
      })

    /**
     * Reads the files into the caller's dataset `params.name` (created on first import), batch by
     * batch as they stream in, each batch written in its own statement: rows checked by
     * `parseCandles`, bad ones reported by line and not kept, stored ones written again unchanged.
     */
    const importFiles = <E>(caller: Owner, request: CandleImportParams, files: Stream.Stream<ImportFile<E>, E>) =>
      Effect.gen(function*() {
        const params = { ...request, venue: request.venue ?? "venue1" }
        const found = yield* repo.findByName(caller.id, params.name)
        if (Option.isSome(found)) {
          const held = found.value
          if (held.venue !== params.venue || held.symbol !== params.symbol || held.timeframe !== params.timeframe) {
            return yield* new Conflict({
              error:
                `Dataset ${params.name} holds ${held.venue} ${held.symbol} ${held.timeframe} bars; import ${params.venue} ${params.symbol} ${params.timeframe} bars under another name`
            })
          }
        }
        const row = yield* repo.upsert({ user_id: caller.id, ...params }, yield* now)
        const seriesId = yield* store.series(seriesKey(row))
        const step = timeframeMillis[params.timeframe]
        const tally = { imported: 0, rejected: 0, problems: [] as Array<CandleProblem> }
        const read = { bytes: 0 }
        yield* files.pipe(
          Stream.flatMap((file) =>
            parseCandles(capped(file.bytes, read), {
              timeframe: params.timeframe,
              ...(file.name === undefined ? {} : { fileName: file.name }),
              maxProblems: listedProblems
            }), { concurrency: 1 }),
          Stream.runForEach((batch) =>
            Effect.gen(function*() {
              const bars = [...batch.rows].sort((a, b) => a.time - b.time)
              yield* store.write(seriesId, bars)
              for (const span of runs(bars, step)) yield* store.cover(seriesId, span)
              tally.imported += bars.length
              tally.rejected += batch.problems.filter((p) => p.line > 0).length + batch.omittedProblems
              for (const problem of batch.problems) {
                if (tally.problems.length < listedProblems) tally.problems.push(problem)
              }
            })
          )
        )
        if (tally.imported === 0) {
          // Nothing usable: a dataset this import created goes again, and the file's problems answer.
          if (Option.isNone(found)) yield* repo.remove(row.id)
          return yield* new InvalidInput({
            error: tally.problems.length === 0
              ? "The file holds no candles"
              : `No row of the file could be imported; the first problem: ${describeProblem(tally.problems[0]!)}`,
            issues: tally.problems.slice(0, 20).map((p) => ({ path: problemPath(p), message: p.message }))
          })
        }
        return new CandleImportResult({
          dataset: yield* describe(row),
          imported: tally.imported,
          rejected: tally.rejected,
          problems: tally.problems.map((p) => ({
            line: p.line,
            message: p.message,
            ...(p.file === undefined ? {} : { file: p.file })
          }))
        })
      }).pipe(
        Effect.catchIf(
          (e): e is CandleFileUnreadable => e instanceof CandleFileUnreadable,
          (e) => Effect.fail(new InvalidInput({ error: `The candle file cannot be read: ${e.message}`, issues: [] }))
        ),
        withRequestSpan("Datasets.import", { attributes: { userId: caller.id, name: request.name } })
      )

    const list = (caller: Owner) =>
      repo.list(caller.id).pipe(
        Effect.flatMap((rows) => Effect.forEach(rows, describe)),
        Effect.map((datasets) => new DatasetsResponse({ datasets })),
        withRequestSpan("Datasets.list", { attributes: { userId: caller.id } })
      )

    const owned = (caller: Owner, id: DatasetId) => repo.findById(id).pipe(ownedBy(caller, `Dataset ${id}`))

    const get = (caller: Owner, id: DatasetId) =>
      owned(caller, id).pipe(
        Effect.flatMap(describe),
        withRequestSpan("Datasets.get", { attributes: { userId: caller.id, datasetId: id } })
      )

    /** Deletes the dataset with its bars. */
    const remove = (caller: Owner, id: DatasetId) =>
      owned(caller, id).pipe(
        Effect.flatMap(() => repo.remove(id)),
        withRequestSpan("Datasets.remove", { attributes: { userId: caller.id, datasetId: id } })
      )

    return { importFiles, list, get, remove } as const
  }),
  dependencies: [DatasetsRepo.Default, CandleStore.Default]
}) {}

const problemPath = (p: CandleProblem) => `${p.file === undefined ? "" : `${p.file} `}line ${p.line}`
const describeProblem = (p: CandleProblem) => p.line === 0 ? p.message : `${problemPath(p)}: ${p.message}`
