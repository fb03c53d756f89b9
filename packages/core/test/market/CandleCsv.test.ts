import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Option, Stream } from "effect"
import { strToU8, zipSync } from "fflate"
import { readFileSync } from "node:fs"
import { type CandleFileOptions, collectCandles, epochMillis, parseCandles } from "../../src/market/CandleCsv.js"

const hour = 3_600_000
const jan1 = Date.UTC(2024, 0, 1)

const bytesOf = (input: string | Uint8Array) => typeof input === "string" ? strToU8(input) : input

/** The input as a stream of chunks of `size` bytes, as an HTTP body or a file would arrive. */
const chunked = (input: string | Uint8Array, size: number) => {
  const bytes = bytesOf(input)
  const chunks: Array<Uint8Array> = []
  for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size))
  return Stream.fromIterable(chunks)
}

const read = (input: string | Uint8Array, options: Partial<CandleFileOptions> = {}, size = 65_536) =>
  collectCandles(parseCandles(chunked(input, size), { timeframe: "1h", ...options }))

/** A klines dump row for the hour starting `hours` after 2024-01-01, in `unit` (1 for ms, 1000 for µs). */
const klines = (hours: number, unit = 1, price = 42_000) => {
  const open = (jan1 + hours * hour) * unit
  return `${open},${price},${price + 50},${price - 50},${price + 10},12.5,${
    open + hour * unit - 1
  },525000.5,1234,6.25,262500.25,0`
}
const klinesHeader =
  "open_time,open,high,low,close,volume,close_time,quote_volume,count,taker_buy_volume,taker_buy_quote_volume,ignore"

const candle = (hours: number, price = 42_000) => ({
  time: jan1 + hours * hour,
  open: price,
  high: price + 50,
  low: price - 50,
  close: price + 10,
  volume: 12.5
})

/** A file of `test/data/`. */
const sample = (name: string) => new Uint8Array(readFileSync(new URL(`../data/${name}`, import.meta.url)))

describe("epochMillis", () => {
  it("reads epoch seconds, milliseconds and microseconds by magnitude, and ISO-8601 in UTC unless offset", () => {
    expect(epochMillis("1704067200")).toEqual(Option.some(jan1))
    expect(epochMillis(1704067200000)).toEqual(Option.some(jan1))
    expect(epochMillis("1704067200000000")).toEqual(Option.some(jan1))
    expect(epochMillis("2024-01-01")).toEqual(Option.some(jan1))
    expect(epochMillis("2024-01-01 00:00:00")).toEqual(Option.some(jan1))
    expect(epochMillis("2024-01-01T01:00:00.250Z")).toEqual(Option.some(jan1 + hour + 250))
    expect(epochMillis("2024-01-01T05:30:00+05:30")).toEqual(Option.some(jan1))
    expect(epochMillis("2023-12-31T21:00:00-03:00")).toEqual(Option.some(jan1))
    expect(epochMillis("2023-02-29")).toEqual(Option.none())
    expect(epochMillis("2024-01-01T24:00:00Z")).toEqual(Option.none())
    expect(epochMillis("yesterday")).toEqual(Option.none())
    expect(epochMillis("0x65920080")).toEqual(Option.none())
    expect(epochMillis("")).toEqual(Option.none())
    expect(epochMillis(1e30)).toEqual(Option.none())
  })
})

describe("parseCandles", () => {
  it.effect("reads the plain layout with a header and millisecond times", () =>
    Effect.gen(function*() {
      const csv = `Time,Open,High,Low,Close,Volume\n${jan1},100,110,90,105,3\n${jan1 + hour},105,106,99,100,0\n`
      const result = yield* read(csv)
      expect(result).toEqual({
        rows: [
          { time: jan1, open: 100, high: 110, low: 90, close: 105, volume: 3 },
          { time: jan1 + hour, open: 105, high: 106, low: 99, close: 100, volume: 0 }
        ],
        problems: [],
        omittedProblems: 0
      })
    }))

  it.effect("reads the plain layout without a header, in epoch seconds and microseconds", () =>
    Effect.gen(function*() {
      const csv = `${jan1 / 1000},100,110,90,105,3\n${(jan1 + hour) * 1000},105,106,99,100,1`
      const { problems, rows } = yield* read(csv)
      expect(problems).toEqual([])
      expect(rows.map((row) => row.time)).toEqual([jan1, jan1 + hour])
    }))

  it.effect("reads ISO-8601 times in the plain layout, with or without a zone", () =>
    Effect.gen(function*() {
      const csv = [
        "time,open,high,low,close,volume",
        "2024-01-01T00:00:00Z,100,110,90,105,3",
        "2024-01-01 01:00:00,100,110,90,105,3",
        "2024-01-01T03:00:00.000+01:00,100,110,90,105,3",
        "2024-01-02,100,110,90,105,3"
      ].join("\n")
      const { problems, rows } = yield* read(csv)
      expect(problems).toEqual([])
      expect(rows.map((row) => row.time)).toEqual([jan1, jan1 + hour, jan1 + 2 * hour, jan1 + 24 * hour])
    }))

  it.effect("reads the klines dump layout with and without its header, in milliseconds and microseconds", () =>
    Effect.gen(function*() {
      const withHeader = yield* read([klinesHeader, klines(0), klines(1)].join("\n"))
      expect(withHeader).toEqual({ rows: [candle(0), candle(1)], problems: [], omittedProblems: 0 })
      const microseconds = yield* read([klines(0, 1000), klines(1, 1000)].join("\n"))
      expect(microseconds).toEqual({ rows: [candle(0), candle(1)], problems: [], omittedProblems: 0 })
    }))

  it.effect("reads each .csv of a zip as a file of the import, and reports what it skipped", () =>
    Effect.gen(function*() {
      const zip = zipSync({
        "BTCUSDT-1h-2024-01-01.csv": strToU8([klinesHeader, klines(0), klines(1)].join("\n")),
        "BTCUSDT-1h-2024-01-02.csv": strToU8(`${klines(24)}\n${klines(1)}\n`),
        "notes/readme.md": strToU8("not candles"),
        "__MACOSX/._BTCUSDT-1h-2024-01-01.csv": strToU8("Mac OS X metadata")
      })
      const result = yield* read(zip, { fileName: "upload.zip" })
      expect(result.rows).toEqual([candle(0), candle(1), candle(24)])
      expect(result.problems).toEqual([
        {
          line: 2,
          file: "BTCUSDT-1h-2024-01-02.csv",
          message: "Open time 2024-01-01T01:00:00.000Z repeats line 3 of BTCUSDT-1h-2024-01-01.csv."
        },
        { line: 0, file: "notes/readme.md", message: "The zip entry is not a .csv file and was skipped." }
      ])
    }))

  it.effect("reports every kind of bad row with its line, and keeps none of them", () =>
    Effect.gen(function*() {
      const lines = [
        "time,open,high,low,close,volume", // 1: header, skipped
        `${jan1},100,110,90,105,3`, // 2: kept
        `${jan1 + hour},100,110,90,105`, // 3
        `${jan1 + hour},100,110,90,105,3,7`, // 4
        `${jan1 + hour},100,abc,90,105,3`, // 5
        `${jan1 + hour},100,110,90,105,`, // 6
        `soon,100,110,90,105,3`, // 7
        `${jan1 + hour},0,110,90,105,3`, // 8
        `${jan1 + hour},100,110,-1,105,3`, // 9
        `${jan1 + hour},100,110,90,105,-3`, // 10
        `${jan1 + hour},100,104,90,105,3`, // 11
        `${jan1 + hour},100,110,101,105,3`, // 12
        `${jan1 + hour + 60_000},100,110,90,105,3`, // 13
        `${jan1},100,110,90,105,3`, // 14
        "", // 15: blank, skipped
        "# a comment, skipped", // 16
        `${jan1 + hour},100,110,90,105,3` // 17: kept
      ]
      const { problems, rows } = yield* read(lines.join("\n"))
      expect(rows.map((row) => row.time)).toEqual([jan1, jan1 + hour])
      expect(problems).toEqual([
        { line: 3, message: "The row has 5 columns where this file's rows have 6." },
        { line: 4, message: "The row has 7 columns where this file's rows have 6." },
        { line: 5, message: "High \"abc\" is not a number." },
        { line: 6, message: "Volume \"\" is not a number." },
        { line: 7, message: "Open time \"soon\" is not an epoch time or an ISO-8601 date." },
        { line: 8, message: "Open 0 is not above zero." },
        { line: 9, message: "Low -1 is not above zero." },
        { line: 10, message: "Volume -3 is negative." },
        { line: 11, message: "High 104 is below the close 105." },
        { line: 12, message: "Low 101 is above the open 100." },
        {
          line: 13,
          message:
            "Open time 2024-01-01T01:01:00.000Z is not on the 1h grid (a whole number of 1h since 1970-01-01 UTC)."
        },
        { line: 14, message: "Open time 2024-01-01T00:00:00.000Z repeats line 2." }
      ])
    }))

  it.effect("reports a klines row whose close time is not one step less one unit after its open time", () =>
    Effect.gen(function*() {
      const late = klines(1).replace(String(jan1 + 2 * hour - 1), String(jan1 + 2 * hour))
      const micro = klines(2, 1000).replace(
        String((jan1 + 3 * hour) * 1000 - 1),
        String((jan1 + 3 * hour) * 1000 - 1000)
      )
      const text = klines(3).replace("525000.5", "lots")
      const { problems, rows } = yield* read([klines(0), late, micro, text, "1,2,3"].join("\r\n"), {
        fileName: "BTCUSDT-1h.csv"
      })
      expect(rows).toEqual([candle(0)])
      expect(problems).toEqual([
        {
          line: 2,
          file: "BTCUSDT-1h.csv",
          message: `Close time ${jan1 + 2 * hour} is not the open time plus 1h less 1 ms (${jan1 + 2 * hour - 1}).`
        },
        {
          line: 3,
          file: "BTCUSDT-1h.csv",
          message: `Close time ${(jan1 + 3 * hour) * 1000 - 1000} is not the open time plus 1h less 1 µs (${
            (jan1 + 3 * hour) * 1000 - 1
          }).`
        },
        { line: 4, file: "BTCUSDT-1h.csv", message: "Quote asset volume \"lots\" is not a number." },
        { line: 5, file: "BTCUSDT-1h.csv", message: "The row has 3 columns where this file's rows have 12." }
      ])
    }))

  it.effect("reports rows off the timeframe's grid, and closes a step early, when the file is on a shorter one", () =>
    Effect.gen(function*() {
      const hourly = [klines(0), klines(1), klines(2), klines(3), klines(4)].join("\n")
      const { problems, rows } = yield* read(hourly, { timeframe: "4h" })
      expect(rows).toEqual([])
      expect(problems.map((problem) => problem.line)).toEqual([1, 2, 3, 4, 5])
      expect(problems[1]!.message).toBe(
        "Open time 2024-01-01T01:00:00.000Z is not on the 4h grid (a whole number of 4h since 1970-01-01 UTC)."
      )
      expect(problems[0]!.message).toBe(
        `Close time ${jan1 + hour - 1} is not the open time plus 4h less 1 ms (${jan1 + 4 * hour - 1}).`
      )
    }))

  it.effect("reads the shipped BTC and ETH samples without a problem, also zipped", () =>
    Effect.gen(function*() {
      const btc = yield* read(sample("BTCUSD-1h-sample.csv"), {}, 4096)
      expect(btc.problems).toEqual([])
      expect(btc.rows).toHaveLength(504)
      expect(btc.rows[0]).toEqual({
        time: Date.UTC(2019, 8, 26),
        open: 8438.35,
        high: 8447,
        low: 8371.72,
        close: 8380.39,
        volume: 499.9
      })
      const eth = yield* read(sample("ETHUSD-1h-sample.csv"), {}, 4096)
      expect(eth.problems).toEqual([])
      expect(eth.rows).toHaveLength(121)
      expect(eth.rows.at(-1)!.time).toBe(Date.UTC(2026, 6, 23))
      const zipped = yield* read(zipSync({ "BTCUSD-1h-sample.csv": sample("BTCUSD-1h-sample.csv") }), {}, 4096)
      expect(zipped).toEqual(btc)
    }))

  it.effect("reports three rows in four off the grid when the hourly sample is read as 4h", () =>
    Effect.gen(function*() {
      const { problems, rows } = yield* read(sample("BTCUSD-1h-sample.csv"), { timeframe: "4h" })
      expect(rows).toHaveLength(126)
      expect(problems).toHaveLength(378)
      expect(problems[0]).toEqual({
        line: 7,
        message: "Open time 2019-09-26T01:00:00.000Z is not on the 4h grid (a whole number of 4h since 1970-01-01 UTC)."
      })
    }))

  it.effect("gives the same result whichever byte the chunks break at", () =>
    Effect.gen(function*() {
      const text = [
        "\uFEFF# Prix en € — données d'exemple, 日本語",
        "time,open,high,low,close,volume",
        `${jan1},100,110,90,105,3`,
        "",
        `${jan1 + hour},1€,110,90,105,3`,
        `2024-01-01T02:00:00Z,100.5,110.25,90.125,105,0.001`,
        `${jan1 + 3 * hour},100,99,90,105,3`
      ].join("\r\n")
      const whole = yield* read(text)
      expect(whole.rows.map((row) => row.time)).toEqual([jan1, jan1 + 2 * hour])
      expect(whole.problems).toEqual([
        { line: 5, message: "Open \"1€\" is not a number." },
        { line: 7, message: "High 99 is below the close 105." }
      ])
      for (const size of [1, 2, 3, 5, 7]) expect(yield* read(text, {}, size)).toEqual(whole)
      const zip = zipSync({ "a.csv": strToU8(text) })
      expect(yield* read(zip, {}, 1)).toEqual({
        ...whole,
        problems: whole.problems.map((problem) => ({ ...problem, file: "a.csv" }))
      })
    }))

  it.effect("skips a byte order mark, CRLF line ends, headers repeated by concatenated dumps, and comments", () =>
    Effect.gen(function*() {
      const text = `\uFEFF${klinesHeader}\r\n${klines(0)}\r\n${klinesHeader}\r\n# next month\r\n${klines(1)}\r\n`
      expect(yield* read(text)).toEqual({ rows: [candle(0), candle(1)], problems: [], omittedProblems: 0 })
    }))

  it.effect("lists the first maxProblems problems and counts the rest", () =>
    Effect.gen(function*() {
      const bad = Array.from({ length: 5 }, (_, i) => `${jan1 + i * hour},100,1,90,105,3`)
      const result = yield* read(bad.join("\n"), { maxProblems: 3 })
      expect(result.rows).toEqual([])
      expect(result.problems.map((problem) => problem.line)).toEqual([1, 2, 3])
      expect(result.omittedProblems).toBe(2)
    }))

  it.effect("emits full batches as the rows arrive, then the rest", () =>
    Effect.gen(function*() {
      const text = Array.from({ length: 5 }, (_, i) => klines(i)).join("\n")
      const batches = yield* Stream.runCollect(
        parseCandles(chunked(text, 100), { timeframe: "1h", batchSize: 2 })
      ).pipe(Effect.map(Chunk.toArray))
      expect(batches.map((batch) => batch.rows.length)).toEqual([2, 2, 1])
    }))

  it.effect("reports a file with no candle rows, and a zip with no .csv", () =>
    Effect.gen(function*() {
      expect((yield* read("time,open,high,low,close,volume\n", { fileName: "empty.csv" })).problems).toEqual([
        { line: 0, file: "empty.csv", message: "The file holds no candle rows." }
      ])
      expect((yield* read(zipSync({ "a.json": strToU8("{}") }))).problems).toEqual([
        { line: 0, file: "a.json", message: "The zip entry is not a .csv file and was skipped." },
        { line: 0, message: "The zip holds no .csv file." }
      ])
    }))

  it.effect("fails with CandleFileUnreadable on a zip cut short", () =>
    Effect.gen(function*() {
      const zip = zipSync({ "a.csv": strToU8(Array.from({ length: 200 }, (_, i) => klines(i)).join("\n")) })
      const error = yield* read(zip.subarray(0, 600)).pipe(Effect.flip)
      expect(error._tag).toBe("CandleFileUnreadable")
    }))
})
