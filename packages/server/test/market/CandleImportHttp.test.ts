import { describe, expect, layer } from "@effect/vitest"
import { testStorages } from "@trading-platform/core/testing"
import { Effect } from "effect"
import { zipSync } from "fflate"
import { readFileSync } from "node:fs"
import { BacktestServer, isFinished, waitForBacktest } from "../support/Backtests.js"
import { call, expectError, signUp } from "../support/TestServer.js"

const hour = 3_600_000
const day = 86_400_000
const start = Date.parse("2025-01-01T00:00:00Z")

/** `count` hourly bars from `from` in the plain layout; close rises by 1 a bar from 100. */
const plainCsv = (from: number, count: number, header = true) =>
  [
    ...(header ? ["time,open,high,low,close,volume"] : []),
    ...Array.from({ length: count }, (_, i) => {
      const close = 100 + i
      return `${from + i * hour},${close - 0.5},${close + 1},${close - 1},${close},${10 + i}`
    })
  ].join("\n") + "\n"

/** The same bars in the venues' kline dump layout, times in microseconds, without a header. */
const dumpCsv = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => {
    const t = from + i * hour
    const close = 100 + i
    return [t * 1000, close - 0.5, close + 1, close - 1, close, 10 + i, (t + hour) * 1000 - 1, 1000, 7, 5, 500, 0].join(
      ","
    )
  }).join("\n")

const importUrl = (params: Record<string, string>) => `/api/market/candles/import?${new URLSearchParams(params)}`
const btc = { name: "btc-2025", venue: "venue2", symbol: "BTC", timeframe: "1h" }

// The backtest server's clock stands at `marketNow` (mid-2025), after every bar imported here.
const user = (label: string) => signUp(label)

describe("candle imports and datasets", () => {
  layer(BacktestServer(testStorages[0]!), { timeout: "120 seconds" })((it) => {
    it.effect("a CSV imports into a new dataset, listed with its bars; the same file again changes nothing", () =>
      Effect.gen(function*() {
        const { token } = yield* user("importer")
        const csv = plainCsv(start, 48)
        const first = yield* call("POST", importUrl(btc), { token, raw: csv, headers: { "content-type": "text/csv" } })
        expect(first.status).toBe(200)
        expect(first.body).toMatchObject({ imported: 48, rejected: 0, problems: [] })
        expect(first.body.dataset).toMatchObject({
          name: "btc-2025",
          venue: "venue2",
          symbol: "BTC",
          timeframe: "1h",
          bars: 48,
          first: "2025-01-01T00:00:00.000Z",
          last: "2025-01-02T23:00:00.000Z"
        })
        const again = yield* call("POST", importUrl(btc), { token, raw: csv, headers: { "content-type": "text/csv" } })
        expect(again.status).toBe(200)
        expect(again.body.dataset.bars).toBe(48)
        const list = yield* call("GET", "/api/market/datasets", { token })
        expect(list.status).toBe(200)
        expect(list.body.datasets.map((d: { name: string }) => d.name)).toEqual(["btc-2025"])
        const one = yield* call("GET", `/api/market/datasets/${first.body.dataset.id}`, { token })
        expect(one.body).toEqual(again.body.dataset)
      }))

    it.effect("the shipped sample of real BTC candles imports whole, as docs/accounts-and-venues.md shows", () =>
      Effect.gen(function*() {
        const { token } = yield* user("sample")
        const sample = readFileSync(new URL("../../../core/test/data/BTCUSD-1h-sample.csv", import.meta.url))
        const reply = yield* call("POST", "/api/market/candles/import?name=btc-sample&symbol=BTC&timeframe=1h", {
          token,
          raw: sample,
          headers: { "content-type": "text/csv" }
        })
        expect(reply.status).toBe(200)
        expect(reply.body).toMatchObject({
          imported: 504,
          rejected: 0,
          dataset: { bars: 504, first: "2019-09-26T00:00:00.000Z", last: "2019-10-16T23:00:00.000Z" }
        })
      }))

    it.effect("bad rows are reported by line and not kept; the good ones are", () =>
      Effect.gen(function*() {
        const { token } = yield* user("bad-rows")
        const lines = plainCsv(start, 6).trimEnd().split("\n")
        lines[2] = `${start + hour},100,99,98,101,5` // high below the close
        lines[4] = `${start + 3 * hour + 60_000},100,102,99,101,5` // off the hourly grid
        lines[5] = `${start + 2 * hour},100,102,99,101,5` // a second bar at 02:00
        const reply = yield* call("POST", importUrl({ ...btc, name: "partly" }), { token, raw: lines.join("\n") })
        expect(reply.status).toBe(200)
        expect(reply.body.imported).toBe(3)
        expect(reply.body.rejected).toBe(3)
        expect(reply.body.problems.map((p: { line: number }) => p.line)).toEqual([3, 5, 6])
        for (const p of reply.body.problems) expect(p.message.length).toBeGreaterThan(10)
        const klines = yield* call(
          "GET",
          `/api/market/klines?symbol=BTC&timeframe=1h&exchange=dataset:partly&start=2025-01-01T00:00:00Z&limit=10`,
          { token }
        )
        expect(klines.status).toBe(200)
        expect(klines.body.klines.map((b: { time: number }) => (b.time - start) / hour)).toEqual([0, 2, 5])
      }))

    it.effect("a multipart upload of dump-layout files in µs, and a zip of them, import as one dataset", () =>
      Effect.gen(function*() {
        const { token } = yield* user("multipart")
        const form = new FormData()
        form.append("file", new Blob([dumpCsv(start, 24)]), "BTCUSDT-1h-2025-01-01.csv")
        form.append("file", new Blob([dumpCsv(start + day, 24)]), "BTCUSDT-1h-2025-01-02.csv")
        const reply = yield* call("POST", importUrl({ ...btc, name: "dump" }), { token, raw: form })
        expect(reply.status).toBe(200)
        expect(reply.body).toMatchObject({ imported: 48, rejected: 0 })
        const zip = zipSync({
          "BTCUSDT-1h-2025-01-03.csv": new TextEncoder().encode(dumpCsv(start + 2 * day, 24)),
          "BTCUSDT-1h-2025-01-04.csv": new TextEncoder().encode(dumpCsv(start + 3 * day, 24))
        })
        const zipped = yield* call("POST", importUrl({ ...btc, name: "dump" }), {
          token,
          raw: zip,
          headers: { "content-type": "application/zip" }
        })
        expect(zipped.status).toBe(200)
        expect(zipped.body.dataset).toMatchObject({ bars: 96, last: "2025-01-04T23:00:00.000Z" })
      }))

    it.effect("a file over the 1 MiB JSON body cap streams in (a month of minutes)", () =>
      Effect.gen(function*() {
        const { token } = yield* user("big")
        const minutes = 31 * 1440
        const rows = Array.from({ length: minutes }, (_, i) => `${start + i * 60_000},100,101,99,100.5,1`)
        const csv = rows.join("\n")
        expect(csv.length).toBeGreaterThan(1024 * 1024)
        const reply = yield* call("POST", importUrl({ ...btc, name: "minutes", timeframe: "1m" }), { token, raw: csv })
        expect(reply.status).toBe(200)
        expect(reply.body.imported).toBe(minutes)
        // Coarser bars are built from the imported minutes.
        const daily = yield* call(
          "GET",
          `/api/market/klines?symbol=BTC&timeframe=1d&exchange=dataset:minutes&start=2025-01-01T00:00:00Z&limit=100`,
          { token }
        )
        expect(daily.body.klines.length).toBe(31)
        expect(daily.body.klines[0]).toEqual({ time: start, open: 100, high: 101, low: 99, close: 100.5, volume: 1440 })
      }))

    it.effect("klines page through a dataset's range; coarser timeframes are built; a finer one is 400", () =>
      Effect.gen(function*() {
        const { token } = yield* user("pages")
        yield* call("POST", importUrl({ ...btc, name: "paged" }), { token, raw: plainCsv(start, 48) })
        const page = (query: string) =>
          call("GET", `/api/market/klines?symbol=BTC&exchange=dataset:paged&${query}`, { token })
        const first = yield* page("timeframe=1h&start=2025-01-01T00:00:00Z&end=2025-01-02T12:00:00Z&limit=20")
        expect(first.body.klines.length).toBe(20)
        expect(first.body.next_start).toBe("2025-01-01T20:00:00.000Z")
        const second = yield* page(`timeframe=1h&start=${first.body.next_start}&end=2025-01-02T12:00:00Z&limit=20`)
        expect(second.body.klines.length).toBe(16)
        expect(second.body.next_start).toBeNull()
        const fourHours = yield* page("timeframe=4h&start=2025-01-01T00:00:00Z&limit=100")
        expect(fourHours.body.klines.length).toBe(12)
        expect(fourHours.body.klines[0]).toEqual({
          time: start,
          open: 99.5,
          high: 104,
          low: 99,
          close: 103,
          volume: 46
        })
        // Without start: the latest bars the dataset has before `end`.
        const latest = yield* page("timeframe=1h&end=2025-01-02T00:00:00Z&limit=3")
        expect(latest.body.klines.map((b: { close: number }) => b.close)).toEqual([121, 122, 123])
        // With neither, the latest bars the dataset has, whatever the clock; past its end, an empty last page.
        const newest = yield* page("timeframe=1h&limit=2")
        expect(newest.body.klines.map((b: { close: number }) => b.close)).toEqual([146, 147])
        const past = yield* page("timeframe=1h&start=2025-02-01T00:00:00Z")
        expect(past.body).toMatchObject({ klines: [], next_start: null })
        const finer = yield* page("timeframe=15m&limit=3")
        expectError(finer, 400, "invalid_input")
        expect(finer.body.issues[0].path).toBe("timeframe")
        expectError(
          yield* page("timeframe=1h&start=2025-01-02T00:00:00Z&end=2025-01-01T00:00:00Z"),
          400,
          "invalid_input"
        )
        expectError(
          yield* call("GET", "/api/market/klines?symbol=ETH&exchange=dataset:paged", { token }),
          422,
          "symbol_not_listed"
        )
        expectError(
          yield* call("GET", "/api/market/klines?symbol=BTC&exchange=dataset:nope", { token }),
          404,
          "not_found"
        )
      }))

    it.effect("a backtest runs on a dataset as its exchange; another symbol on it is 422, an unknown dataset 404", () =>
      Effect.gen(function*() {
        const { token } = yield* user("backtester")
        yield* call("POST", importUrl({ ...btc, name: "bt" }), { token, raw: plainCsv(start, 48) })
        const program = yield* call("POST", "/api/programs", {
          token,
          body: { name: "hold", code: "export function decide(data) { return { operation: 'hold' } }" }
        })
        expect(program.status).toBe(201)
        const request = { timeframe: "1h", start: "2025-01-01T00:00:00Z", end: "2025-01-03T00:00:00Z" }
        const queued = yield* call("POST", `/api/programs/${program.body.id}/backtest`, {
          token,
          body: { ...request, symbol: "BTC", exchange: "dataset:bt" }
        })
        expect(queued.status).toBe(202)
        expect(queued.body.exchange).toBe("dataset:bt")
        // The program saw the dataset's bars: 48 closes rising by 1 from 100.
        const done = yield* waitForBacktest(token, queued.body.id, isFinished)
        expect(done).toMatchObject({ status: "completed", error: null })
        expect(done.equity_curve.map((p: { time: number }) => p.time)).toEqual(
          Array.from({ length: 48 }, (_, i) => start + i * hour)
        )
        expectError(
          yield* call("POST", `/api/programs/${program.body.id}/backtest`, {
            token,
            body: { ...request, symbol: "ETH", exchange: "dataset:bt" }
          }),
          422,
          "symbol_not_listed"
        )
        expectError(
          yield* call("POST", `/api/programs/${program.body.id}/backtest`, {
            token,
            body: { ...request, symbol: "BTC", exchange: "dataset:missing" }
          }),
          404,
          "not_found"
        )
      }))

    it.effect("failures: another symbol under a dataset's name 409, no good row 400, bad params 400, no token 401", () =>
      Effect.gen(function*() {
        const { token } = yield* user("failures")
        yield* call("POST", importUrl({ ...btc, name: "taken" }), { token, raw: plainCsv(start, 4) })
        // Without a venue, the dataset trades by venue1's rules.
        const plain = yield* call("POST", "/api/market/candles/import?name=plain&symbol=BTC&timeframe=1h", {
          token,
          raw: plainCsv(start, 4)
        })
        expect(plain.status).toBe(200)
        expect(plain.body.dataset.venue).toBe("venue1")
        expectError(
          yield* call("POST", importUrl({ ...btc, name: "taken", symbol: "ETH" }), { token, raw: plainCsv(start, 4) }),
          409,
          "conflict"
        )
        const garbage = yield* call("POST", importUrl({ ...btc, name: "garbage" }), { token, raw: "a,b,c\n1,2,3\n" })
        expectError(garbage, 400, "invalid_input")
        expect(garbage.body.issues.length).toBeGreaterThan(0)
        // A dataset that imported nothing is not kept.
        const list = yield* call("GET", "/api/market/datasets", { token })
        expect(list.body.datasets.map((d: { name: string }) => d.name)).toEqual(["plain", "taken"])
        const zipLike = new Uint8Array([0x50, 0x4b, 0x03, 0x04, 1, 2, 3])
        expectError(
          yield* call("POST", importUrl({ ...btc, name: "broken" }), { token, raw: zipLike }),
          400,
          "invalid_input"
        )
        for (const bad of [{ timeframe: "2h" }, { venue: "venue3" }, { name: "no spaces" }, { symbol: "B-T-C" }]) {
          const reply = yield* call("POST", importUrl({ ...btc, ...bad }), { token, raw: plainCsv(start, 4) })
          expectError(reply, 400, "invalid_input")
        }
        expectError(yield* call("POST", importUrl(btc), { raw: plainCsv(start, 4) }), 401, "unauthorized")
        expectError(yield* call("GET", "/api/market/datasets"), 401, "unauthorized")
      }))

    it.effect("another user's dataset is 403 and invisible to them; unknown 404; deleted with its bars, 204", () =>
      Effect.gen(function*() {
        const owner = yield* user("owner")
        const other = yield* user("other")
        const created = yield* call("POST", importUrl({ ...btc, name: "mine" }), {
          token: owner.token,
          raw: plainCsv(start, 4)
        })
        const id = created.body.dataset.id
        expectError(yield* call("GET", `/api/market/datasets/${id}`, { token: other.token }), 403, "forbidden")
        expectError(yield* call("DELETE", `/api/market/datasets/${id}`, { token: other.token }), 403, "forbidden")
        expectError(
          yield* call("GET", "/api/market/klines?symbol=BTC&exchange=dataset:mine", { token: other.token }),
          404,
          "not_found"
        )
        expect((yield* call("GET", "/api/market/datasets", { token: other.token })).body.datasets).toEqual([])
        expectError(yield* call("GET", "/api/market/datasets/999999", { token: owner.token }), 404, "not_found")
        expect((yield* call("DELETE", `/api/market/datasets/${id}`, { token: owner.token })).status).toBe(204)
        expectError(yield* call("GET", `/api/market/datasets/${id}`, { token: owner.token }), 404, "not_found")
        expectError(
          yield* call("GET", "/api/market/klines?symbol=BTC&exchange=dataset:mine", { token: owner.token }),
          404,
          "not_found"
        )
      }))
  })
})
