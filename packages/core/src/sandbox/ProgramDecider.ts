import { Either, type ParseResult, Schema } from "effect"
import { parseErrorIssues, summarizeIssues } from "../http/DecodeFailure.js"
import { type Candle, timeframeMillis } from "../venues/Venue.js"
import { barFields, writeColumns } from "./BarColumns.js"
import type { Decider } from "./Decider.js"
import { Decision, hold, ProgramRunError } from "./Decision.js"
import { firstLine } from "./LoadFailure.js"
import type { ProgramRun } from "./ProgramRuntime.js"
import { candleWindow } from "./SandboxLimits.js"
import { type IndicatorColumns, makeWindowIndicators } from "./WindowIndicators.js"

/**
 * The most bars that cross into the sandbox at once: the engine's chunk (a whole stream chunk,
 * possibly large) goes in pieces, so the buffers copied into the sandbox's WASM memory, which
 * never shrinks, stay small. A run's first pieces are smaller (from `firstPiece` bars, doubling),
 * because the host computes the indicator calls a program makes only from the piece after the one
 * where it first makes them.
 */
const barsPerPiece = 1024
const firstPiece = 64

/**
 * The most bars one call into the sandbox decides. Crossing into the sandbox costs about as much
 * as deciding a bar, so quiet bars are decided in batches; each bar keeps the CPU budget of one
 * call, as when decided alone (live), and a call hands back early once it has spent one bar's.
 */
const barsPerCall = 64

// QuickJS's words, then V8's, for a heap or stack the program used up.
const exhausted =
  /out of memory|stack overflow|string too long|Maximum call stack size exceeded|Invalid (string|array|typed array) length|Array buffer allocation failed/

/** One decision, or a list of them (a program of several symbols, each naming its symbol); the issues are the shape's own. */
const decodeOne = Schema.decodeUnknownEither(Schema.parseJson(Decision))
const decodeList = Schema.decodeUnknownEither(Schema.parseJson(Schema.Array(Decision)))
const decodeJson = (text: string): Either.Either<Decision | ReadonlyArray<Decision>, ParseResult.ParseError> =>
  text.startsWith("[") ? decodeList(text) : decodeOne(text)

/**
 * The decisions an answer's text stands for, one per symbol of the run, or why it is invalid.
 * Programs tend to repeat a few exact answers, so each text is read once (the last 1,024 are kept;
 * a program that answers ever-new texts, a changing reason say, only churns them). The arrays are
 * shared between the bars that answered the same text: nothing changes them.
 */
const decisionReader = (symbols: ReadonlyArray<string>) => {
  const slotOf = new Map(symbols.map((symbol, s) => [symbol, s]))
  const read = (text: string): ReadonlyArray<Decision> | { readonly invalid: string } => {
    const decoded = decodeJson(text)
    if (Either.isLeft(decoded)) {
      return {
        invalid: `decide returned an invalid decision: ${summarizeIssues(parseErrorIssues(decoded.left)).slice(0, 500)}`
      }
    }
    // Each decision names its symbol, or means the first.
    const decisions: Array<Decision> = symbols.map(() => hold)
    const named = new Set<number>()
    for (const decision of Array.isArray(decoded.right) ? decoded.right : [decoded.right as Decision]) {
      const slot = slotOf.get(decision.symbol ?? symbols[0]!)
      if (slot === undefined) {
        return { invalid: `decide named ${decision.symbol}, which this run does not trade (${symbols.join(", ")})` }
      }
      if (named.has(slot)) return { invalid: `decide answered more than one decision for ${symbols[slot]}` }
      named.add(slot)
      decisions[slot] = decision
    }
    return decisions
  }
  const known = new Map<string, ReturnType<typeof read>>()
  return (text: string) => {
    let result = known.get(text)
    if (result === undefined) {
      if (known.size >= 1024) known.clear()
      known.set(text, result = read(text))
    }
    return result
  }
}

/**
 * What one call into a runtime's guest answered: its value, or how it failed outside the guest's own
 * try/catch (only a spent CPU budget or an exhausted heap do; a stall of the safety net is thrown
 * as `SandboxStalled`), with the error as text for an exhausted heap.
 */
export type GuestCall<A> =
  | { readonly value: A }
  | { readonly overBudget: true }
  | { readonly overBudget: false; readonly text: string }

/**
 * The guest's driver (see `guest/Bootstrap.ts`) as a runtime calls it, its arguments and answers as
 * plain values; each has the CPU budget of one call, `decide` for each bar it decides. `decide`
 * takes the account (position, balance and band) only when it changed: it changes on fills.
 */
export interface GuestDriver {
  readonly chunk: (buffer: Float64Array, bars: number, values: Float64Array, calls: string) => GuestCall<unknown>
  readonly wanted: () => GuestCall<string>
  readonly decide: (
    from: number,
    to: number,
    holds: boolean,
    account: Float64Array | undefined
  ) => GuestCall<number | string>
  /** The bar of the piece being decided (-1 before the first, or when the runtime cannot tell). */
  readonly at: () => number
}

/** The arguments of the guest's `makeDriver` after the program's `decide`, for this run. */
export const driverArguments = (run: ProgramRun): [string, string, number, string, string] => [
  JSON.stringify(run.symbols),
  run.timeframe,
  timeframeMillis[run.timeframe],
  JSON.stringify((run.timeframes ?? []).map((t) => [t, timeframeMillis[t]])),
  JSON.stringify(run.params ?? {})
]

/**
 * A loaded program, driven through its runtime's `GuestDriver`, as the engine's `Decider`; the
 * host's indicator values come from `columns` where an earlier run of the program computed them.
 */
export const makeDecider = (driver: GuestDriver, run: ProgramRun, columns?: IndicatorColumns): Decider => {
  const symbolCount = run.symbols.length
  const decisionsOf = decisionReader(run.symbols)
  const indicators = makeWindowIndicators(candleWindow, columns)
  let bars: ReadonlyArray<ReadonlyArray<Candle>> = []
  /** The account the sandbox was last sent (position, balance and band, as `decide` takes them), and the next one. */
  let sent = new Float64Array(1 + 6 * symbolCount).fill(NaN), next = new Float64Array(1 + 6 * symbolCount)
  /** The bars of `bars` the sandbox holds now, and how many the next piece may hold. */
  let pieceStart = 0, pieceEnd = 0, pieceSize = firstPiece
  const fail = (index: number, reason: ProgramRunError["reason"], message: string): never => {
    throw new ProgramRunError({ reason, message, time: bars[0]![index]!.time })
  }
  /** The value of a call, or the run's failure for an error that escaped the driver's own try/catch. */
  const answer = <A>(call: GuestCall<A>, index: number): A => {
    if ("value" in call) return call.value
    if (call.overBudget) return fail(index, "cpu_budget_exceeded", "decide exceeded its CPU budget")
    return fail(index, "memory_exceeded", `decide exhausted its memory: ${firstLine(call.text)}`)
  }
  /** Hands the sandbox the bars from `start` on, with the host's indicator values for them. */
  const loadPiece = (start: number) => {
    const pieces = bars.map((symbolBars) => symbolBars.slice(start, start + pieceSize))
    const piece = pieces[0]!
    pieceSize = Math.min(barsPerPiece, 2 * pieceSize)
    indicators.want(answer(driver.wanted(), start))
    const values = indicators.chunk(piece)
    // One column per field and symbol, which the driver reads in place.
    const n = piece.length, buffer = new Float64Array(n * barFields * symbolCount)
    pieces.forEach((symbolPiece, s) => writeColumns(symbolPiece, buffer, s * barFields * n))
    answer(driver.chunk(buffer, n, values.buffer, values.calls), start)
    pieceStart = start
    pieceEnd = start + piece.length
  }
  return {
    chunk: (next) => {
      bars = next
      pieceStart = pieceEnd = 0
    },
    decide: (from, { balance, positions }, bands, until = Infinity, holds = false) => {
      if (from >= pieceEnd) loadPiece(from)
      next[0] = balance
      for (let s = 0; s < symbolCount; s++) {
        const p = positions[s]!, band = bands[s]!, o = 1 + 6 * s
        next[o] = p === null ? 0 : p.side === "long" ? 1 : -1
        next[o + 1] = p?.size ?? 0
        next[o + 2] = p?.entry_price ?? 0
        next[o + 3] = p?.leverage ?? 0
        next[o + 4] = band.floor
        next[o + 5] = band.ceiling
      }
      let changed = false
      for (let k = 0; k < next.length && !changed; k++) changed = next[k] !== sent[k]
      // What is sent is kept; the other buffer takes the next call's account.
      if (changed) [sent, next] = [next, sent]
      const to = Math.min(pieceEnd, from + barsPerCall, until)
      const result = driver.decide(from - pieceStart, to - pieceStart, holds, changed ? sent : undefined)
      // Stopped before its first bar (at is -1 then), the call is charged to that bar.
      const reply: number | string = "value" in result
        ? result.value
        : answer(result, pieceStart + Math.max(driver.at(), from - pieceStart))
      // A number is where the run stopped without a decision.
      if (typeof reply === "number") return { index: pieceStart + reply }
      const colon = reply.indexOf(":")
      const index = pieceStart + Number(reply.slice(0, colon))
      const text = reply.slice(colon + 1)
      if (text.startsWith("!")) {
        return fail(
          index,
          exhausted.test(text) ? "memory_exceeded" : "threw",
          `decide threw ${firstLine(text.slice(1))}`
        )
      }
      if (text === "promise") {
        return fail(
          index,
          "invalid_decision",
          "decide returned a Promise; it must return its decision directly (decide cannot be async)"
        )
      }
      const decisions = decisionsOf(text)
      return "invalid" in decisions ? fail(index, "invalid_decision", decisions.invalid) : { index, decisions }
    }
  }
}
