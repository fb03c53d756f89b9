// The candle store: a year of one-minute bars (525,600) imported from a CSV (parse, check, write),
// and read back into a backtest's window, on PGlite and (with BENCH_DATABASE_URL or TEST_DATABASE_URL)
// PostgreSQL. Baselines in the same run: parsing alone, and one raw `unnest` insert and `SELECT` of
// the same rows with the same driver.
import * as SqlClient from "@effect/sql/SqlClient"
import {
  CandleStore,
  collectCandles,
  DatabaseLive,
  Datasets,
  parseCandles,
  PlatformConfig,
  platformOptions,
  type StorageConfig,
  Users
} from "@trading-platform/core"
import { Duration, Effect, Layer, Redacted, Stream } from "effect"
import { withFreshDatabase } from "./FreshDatabase.js"

const bars = 525_600
const start = Date.parse("2025-01-01T00:00:00Z")
const csv = new TextEncoder().encode(
  Array.from({ length: bars }, (_, i) => {
    const open = 60_000 + 1000 * Math.sin(i / 5000)
    return `${start + i * 60_000},${open.toFixed(2)},${(open + 12.5).toFixed(2)},${(open - 10).toFixed(2)},${
      (open + 3.25).toFixed(2)
    },${(1 + (i % 97) / 10).toFixed(3)}`
  }).join("\n")
)
const chunks = (bytes: Uint8Array) =>
  Stream.fromIterable(
    Array.from({ length: Math.ceil(bytes.length / 65_536) }, (_, i) => bytes.subarray(i * 65_536, (i + 1) * 65_536))
  )

const seconds = (ms: number) => (ms / 1000).toFixed(2)
const rate = (n: number, ms: number) => `${Math.round(n / (ms / 1000)).toLocaleString("en")}/s`
const timed = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.timed(self), ([duration, value]) => ({ ms: Duration.toMillis(duration), value }))

const measure = (storage: StorageConfig) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const users = yield* Users
    yield* users.register({ email: "bench@example.com", username: "bench", password: "bench password 1" })
    const owner = yield* users.ownerByEmail("bench@example.com")
    const datasets = yield* Datasets
    const store = yield* CandleStore

    const parse = yield* timed(collectCandles(parseCandles(chunks(csv), { timeframe: "1m" })))
    const imported = yield* timed(datasets.importFiles(
      owner,
      { name: "bench", venue: "venue1", symbol: "BTC", timeframe: "1m" },
      Stream.make({ bytes: chunks(csv) })
    ))
    const again = yield* timed(datasets.importFiles(
      owner,
      { name: "bench", venue: "venue1", symbol: "BTC", timeframe: "1m" },
      Stream.make({ bytes: chunks(csv) })
    ))
    const rows = parse.value.rows
    yield* sql`CREATE TEMP TABLE raw_bars (time bigint, open float8, high float8, low float8, close float8, volume float8)`
    const rawWrite = yield* timed(sql`
      INSERT INTO raw_bars SELECT * FROM unnest(${rows.map((r) => r.time)}::bigint[], ${
      rows.map((r) => r.open)
    }::float8[],
        ${rows.map((r) => r.high)}::float8[], ${rows.map((r) => r.low)}::float8[], ${
      rows.map((r) => r.close)
    }::float8[],
        ${rows.map((r) => r.volume)}::float8[])`)
    const id = imported.value.dataset.id
    const seriesId = (yield* store.existing({ venue: "venue1", symbol: "BTC", timeframe: "1m", datasetId: id }))!
    const span = { start, end: start + bars * 60_000 }
    const read = yield* timed(store.read(seriesId, span))
    const rawRead = yield* timed(
      sql`SELECT * FROM raw_bars WHERE time >= ${span.start} AND time < ${span.end} ORDER BY time`
    )
    if (read.value.length !== bars || imported.value.imported !== bars) {
      throw new Error("the bench read or wrote the wrong bars")
    }
    console.log(
      `| ${storage.kind} | import (parse, check, write) | ${seconds(imported.ms)} s | ${
        rate(bars, imported.ms)
      } | parse alone ${seconds(parse.ms)} s; raw unnest insert ${seconds(rawWrite.ms)} s | ${
        ((parse.ms + rawWrite.ms) / imported.ms).toFixed(2)
      } |`
    )
    console.log(
      `| ${storage.kind} | the same file again (upsert) | ${seconds(again.ms)} s | ${rate(bars, again.ms)} | | |`
    )
    console.log(
      `| ${storage.kind} | read a year into a backtest | ${seconds(read.ms)} s | ${rate(bars, read.ms)} | raw SELECT ${
        seconds(rawRead.ms)
      } s | ${(rawRead.ms / read.ms).toFixed(2)} |`
    )
  }).pipe(
    Effect.provide(
      Layer.mergeAll(Datasets.Default, CandleStore.Default, Users.Default).pipe(
        Layer.provideMerge(DatabaseLive),
        Layer.provideMerge(PlatformConfig.layer(platformOptions({ storage })))
      )
    )
  )

export const run = async () => {
  console.log("525,600 one-minute bars (a year). Ratio: the baseline's time over the platform's (1 = as fast).\n")
  console.log("| storage | what | time | bars/s | baseline (same run) | ratio |")
  console.log("|---|---|---|---|---|---|")
  await Effect.runPromise(measure({ kind: "pglite", dataDir: "memory://" }))
  const url = process.env["BENCH_DATABASE_URL"] ?? process.env["TEST_DATABASE_URL"]
  if (url === undefined) console.log("\nPostgreSQL: skipped (set BENCH_DATABASE_URL or TEST_DATABASE_URL)")
  else {await withFreshDatabase(url, (fresh) =>
      Effect.runPromise(measure({ kind: "postgres", url: Redacted.make(fresh) })))}
}
