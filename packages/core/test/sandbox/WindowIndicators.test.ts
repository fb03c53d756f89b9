import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Decider } from "../../src/sandbox/Decider.js"
import type { AccountState } from "../../src/sandbox/Decider.js"
import { type Decision, ProgramRunError } from "../../src/sandbox/Decision.js"
import { ProgramRuntime } from "../../src/sandbox/ProgramRuntime.js"
import { candleWindow } from "../../src/sandbox/SandboxLimits.js"
import {
  type IndicatorColumns,
  makeIndicatorColumns,
  makeWindowIndicators
} from "../../src/sandbox/WindowIndicators.js"
import type { Candle } from "../../src/venues/Venue.js"
import { runtimes } from "./Runtimes.js"

/** A seeded random walk of hourly bars. */
const walk = (count: number): Array<Candle> => {
  let seed = 7, close = 100
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648
  return Array.from({ length: count }, (_, i) => {
    const open = close
    close = open * (1 + (random() - 0.5) * 0.02)
    const high = Math.max(open, close) * (1 + random() * 0.01), low = Math.min(open, close) * (1 - random() * 0.01)
    return { time: 1_700_000_000_000 + i * 3_600_000, open, high, low, close, volume: 1 + random() }
  })
}

const flat: AccountState = { positions: [null], balance: 10_000 }
const open = [{ floor: -Infinity, ceiling: Infinity }]

const load = (code: string) =>
  Effect.flatMap(
    ProgramRuntime,
    (runtime) => runtime.load({ code, symbols: ["BTC"], timeframe: "1h", params: {}, seed: 1 })
  )

/** Feeds the bars in engine chunks of `chunkSize`, as the engine does, and answers the decisions other than hold. */
const drive = (decider: Decider, candles: ReadonlyArray<Candle>, chunkSize: number) => {
  const out: Array<Decision> = []
  for (let start = 0; start < candles.length; start += chunkSize) {
    const chunk = candles.slice(start, start + chunkSize)
    decider.chunk([chunk])
    for (let from = 0; from < chunk.length;) {
      const stop = decider.decide(from, flat, open)
      if (stop.decisions !== undefined) out.push(stop.decisions[0]!)
      from = stop.decisions === undefined ? stop.index : stop.index + 1
    }
  }
  return out
}

/**
 * A program that runs `eachBar` on every bar and holds until the bar at `last`, then closes with
 * `report` (evaluated in decide) as its reason.
 */
const reporting = (last: number, report: string, prelude = "", eachBar = "") => `
  ${prelude}
  export function decide(data) {
    ${eachBar}
    if (data.bar.time !== ${last}) return { operation: "hold" }
    return { operation: "close", reason: JSON.stringify(${report}) }
  }`

/** The report of a `reporting` program run over the bars. */
const reportOf = (code: string, candles: ReadonlyArray<Candle>, chunkSize = 700) =>
  Effect.map(load(code), (decider) => JSON.parse(drive(decider, candles, chunkSize).at(-1)!.reason!))

const mean = (values: ReadonlyArray<number>) => values.reduce((a, b) => a + b, 0) / values.length

describe.each(runtimes)("ta over data.candles in $name, computed by the host", ({ layer }) => {
  it.layer(layer())((it) => {
    it.scoped("answers bit for bit what the sandbox computes itself, for every helper and argument, across chunks", () =>
      Effect.gen(function*() {
        const candles = walk(1_500)
        const calls = [
          ["sma", 10],
          ["sma", 30],
          ["sma", 500],
          ["sma", 600],
          ["ema", 2.5],
          ["ema", 12],
          ["ema", 10, 99],
          ["rsi"],
          ["rsi", 7],
          ["macd"],
          ["macd", 5, 13, 4],
          ["atr"],
          ["atr", 21],
          ["bollinger"],
          ["bollinger", 15, 1.5]
        ]
        // Each call on data.candles against the same call on a copy, which the host never computes.
        const report = yield* reportOf(
          reporting(
            candles.at(-1)!.time,
            "{ checked, numbers, differ }",
            `
          const calls = ${JSON.stringify(calls)}
          const same = (x, y) => x === null || typeof x === "number" ? Object.is(x, y)
            : y !== null && Object.keys(x).join() === Object.keys(y).join() && Object.keys(x).every((k) => Object.is(x[k], y[k]))
          let checked = 0, numbers = 0, bar = 0
          const differ = []`,
            `
          const copy = data.candles.slice()
          // One call starts late, once the host's window has long been full.
          for (const [name, ...args] of ++bar > 900 ? [...calls, ["sma", 7]] : calls) {
            const fromHost = ta[name](data.candles, ...args), own = ta[name](copy, ...args)
            checked++
            if (own !== null) numbers++
            if (!same(fromHost, own) && differ.length < 5) differ.push([name, args, data.candles.length, fromHost, own])
          }`
          ),
          candles
        )
        expect(report).toMatchObject({ checked: calls.length * candles.length + 600, differ: [] })
        expect(report.numbers).toBeGreaterThan(calls.length * 1_000)
      }))

    it.scoped("a call that throws throws the same from the host's values as in the sandbox", () =>
      Effect.gen(function*() {
        const candles = walk(1_500)
        // A fractional period makes sma read past the candles: null while too short, then a TypeError.
        const report = yield* reportOf(
          reporting(
            candles.at(-1)!.time,
            "[caught, nulls]",
            "let caught = 0, nulls = 0",
            "try { if (ta.sma(data.candles, 2.5) === null) nulls++ } catch (e) { if (e instanceof TypeError) caught++ }"
          ),
          candles
        )
        expect(report).toEqual([candles.length - 2, 2])
      }))

    it.scoped("a period that is an object is converted as often as the plain helper converts it, no more", () =>
      Effect.gen(function*() {
        const candles = walk(1_500)
        // Each conversion of the period, to a number or to a key, counts.
        const report = yield* reportOf(
          reporting(
            candles.at(-1)!.time,
            "[onWindow.count, onCopy.count]",
            `
          const period = () => ({ count: 0, valueOf() { this.count++; return 3 }, toString() { this.count++; return "3" } })
          const onWindow = period(), onCopy = period()`,
            `
          ta.sma(data.candles, onWindow)
          ta.sma(data.candles.slice(), onCopy)`
          ),
          candles
        )
        expect(report[0]).toBeGreaterThan(candles.length)
        expect(report[0]).toBe(report[1])
      }))

    it.scoped("reads the candles as delivered, whatever the program does to the array in place", () =>
      Effect.gen(function*() {
        const candles = walk(1_500)
        // Each bar overwrites the candle it was given; ta.sma on data.candles still sees the market.
        const [fromHost, copy] = yield* reportOf(
          reporting(
            candles.at(-1)!.time,
            "report",
            "",
            `
          const report = [ta.sma(data.candles, 3), ta.sma(data.candles.slice(), 3)]
          data.candles[data.candles.length - 1] = { close: 0 }`
          ),
          candles
        )
        const lastThree = candles.slice(-3).map((c) => c.close)
        expect(fromHost).toBe(mean(lastThree))
        expect(copy).toBe((0 + 0 + lastThree[2]!) / 3)
      }))

    it.scoped("a program may call ta on data.candles thousands of times a bar within its CPU budget; on a copy, counted, it may not", () =>
      Effect.gen(function*() {
        const candles = walk(1_200)
        // The program sums 2000 EMAs over the window each bar before deciding: on a copy, each walks
        // the 500 candles in the sandbox, a million steps a bar, past the counted budget.
        const program = (series: string) =>
          reporting(
            candles.at(-1)!.time,
            "sum",
            "let sum = 0",
            `
            const series = ${series}
            for (let k = 0; k < 2000; k++) sum += ta.ema(series, 20) ?? 0`
          )
        const run = (series: string) =>
          Effect.flatMap(
            load(program(series)),
            (decider) => Effect.try({ try: () => drive(decider, candles, 1_000), catch: (e) => e })
          )
        expect((yield* run("data.candles")).map((d) => d.operation)).toEqual(["close"])
        const error = yield* Effect.flip(run("data.candles.slice()"))
        expect(error).toBeInstanceOf(ProgramRunError)
        expect(error).toMatchObject({ reason: "cpu_budget_exceeded" })
      }))

    it.scoped("bars skipped or left out of a chunk turn the host's values off, so ta still matches data.candles", () =>
      Effect.gen(function*() {
        const candles = walk(1_500)
        const program = reporting(
          candles.at(-1)!.time,
          "mean",
          "",
          `
          const mean = ta.sma(data.candles, 2)
          if (data.bar.time === ${candles[1_497]!.time}) return { operation: "close" }`
        )
        /** Feeds bars 0 to 1497 of `first`, where the first pieces see the call and the later ones get the host's values. */
        const upTo1497 = (decider: Decider, first: ReadonlyArray<Candle>) => {
          decider.chunk([first])
          for (let from = 0;;) {
            const stop = decider.decide(from, flat, open)
            if (stop.decisions !== undefined) return
            from = stop.index
          }
        }
        const expected = JSON.stringify((candles[1_497]!.close + candles[1_499]!.close) / 2)
        // Bar 1498 skipped inside a chunk.
        const skipped = yield* load(program)
        upTo1497(skipped, candles)
        expect(skipped.decide(1_499, flat, open).decisions?.[0]!.reason).toBe(expected)
        // Bar 1498 left out at the end of a chunk.
        const leftOut = yield* load(program)
        upTo1497(leftOut, candles.slice(0, 1_499))
        leftOut.chunk([candles.slice(1_499)])
        expect(leftOut.decide(0, flat, open).decisions?.[0]!.reason).toBe(expected)
      }))

    it.scoped("a program that garbles the report of its calls (a toJSON on arrays) only loses the host's values", () =>
      Effect.gen(function*() {
        const candles = walk(1_500)
        const report = yield* reportOf(
          reporting(
            candles.at(-1)!.time,
            "ta.sma(data.candles, 3)",
            `
          Object.defineProperty(Array.prototype, "toJSON", { value() { return "garbled" } })`
          ),
          candles
        )
        expect(report).toBe(mean(candles.slice(-3).map((c) => c.close)))
      }))
  })
})

describe("the host's values kept across one program's runs (makeIndicatorColumns)", () => {
  const calls = [
    ["sma", 10, null, null],
    ["sma", 200, null, null],
    ["ema", 12, null, null],
    ["macd", null, null, null],
    [
      "bollinger",
      20,
      2,
      null
    ],
    ["atr", 14, null, null]
  ]
  /** A run as the decider makes one: pieces of 64 bars doubling to 1,024, the calls wanted from the second piece, one more from the sixth. */
  const run = (candles: ReadonlyArray<Candle>, columns?: IndicatorColumns) => {
    const indicators = makeWindowIndicators(candleWindow, columns)
    const values: Array<Buffer> = []
    for (let start = 0, size = 64, piece = 0; start < candles.length; start += size, size = Math.min(1_024, 2 * size)) {
      if (piece === 1) indicators.want(JSON.stringify(calls.slice(0, -1)))
      if (piece++ === 5) indicators.want(JSON.stringify(calls.slice(-1)))
      values.push(Buffer.from(indicators.chunk(candles.slice(start, start + size)).buffer.buffer))
    }
    // The doubles' bytes: equal only bit for bit.
    return Buffer.concat(values).toString("hex")
  }

  it("answers the values a run computes alone, bit for bit, run after run", () => {
    const candles = walk(6_000)
    const alone = run(candles)
    const columns = makeIndicatorColumns()
    for (let i = 0; i < 3; i++) expect(run(candles, columns)).toBe(alone)
  })

  it("reads a value again only for the same candles from the same first candle", () => {
    const candles = walk(3_000)
    const columns = makeIndicatorColumns()
    const first = run(candles, columns)
    // Copies of the candles, one of them changed: a run over them computes its own values.
    const copies = candles.map((c) => ({ ...c }))
    copies[2_000] = { ...copies[2_000]!, close: copies[2_000]!.close * 2 }
    expect(run(copies, columns)).toBe(run(copies))
    // From the same first candle, other candles after it: values from there on are its own.
    const diverging = [...candles.slice(0, 1_500), ...copies.slice(1_500)]
    expect(run(diverging, columns)).toBe(run(diverging))
    // A run that starts later, over the same candles, computes from its own first bar.
    expect(run(candles.slice(700), columns)).toBe(run(candles.slice(700)))
    // The same candles again read the first run's values: a candle changed in place in between is not seen.
    const changed = candles[2_500]!
    ;(changed as { close: number }).close *= 2
    expect(run(candles, columns)).toBe(first)
    expect(run(candles)).not.toBe(first)
  })

  it("computes what lies past a column's last kept bar", () => {
    const candles = walk(51_000)
    const columns = makeIndicatorColumns()
    const alone = run(candles)
    expect(run(candles, columns)).toBe(alone)
    expect(run(candles, columns)).toBe(alone)
  })
})
