import { Either, type ParseResult, Schema } from "effect"
import type { QuickJSHandle } from "quickjs-emscripten"
import { parseErrorIssues, summarizeIssues } from "../http/DecodeFailure.js"
import { type Candle, timeframeMillis } from "../venues/Venue.js"
import type { Decider } from "./Decider.js"
import { Decision, hold, ProgramRunError } from "./Decision.js"
import { firstLine } from "./LoadFailure.js"
import type { ProgramRun } from "./ProgramRuntime.js"
import { describeError, type Helpers, type Sandbox } from "./Sandbox.js"
import { candleWindow } from "./SandboxLimits.js"
import { makeWindowIndicators } from "./WindowIndicators.js"

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
 * as deciding a bar, so quiet bars are decided in batches; the cap bounds how far one bar can
 * overrun its CPU budget on its neighbours' share.
 */
const barsPerCall = 64

/** Numbers per bar in the buffer a chunk crosses into the sandbox as. */
const barFields = 6

const exhausted = /out of memory|stack overflow|string too long/

/** One decision, or a list of them (a program of several symbols, each naming its symbol); the issues are the shape's own. */
const decodeOne = Schema.decodeUnknownEither(Schema.parseJson(Decision))
const decodeList = Schema.decodeUnknownEither(Schema.parseJson(Schema.Array(Decision)))
const decodeJson = (text: string): Either.Either<Decision | ReadonlyArray<Decision>, ParseResult.ParseError> =>
  text.startsWith("[") ? decodeList(text) : decodeOne(text)

/** Decodes decisions, remembering the last ones: programs tend to repeat a few exact answers. */
const decisionDecoder = () => {
  const decoded = new Map<string, ReturnType<typeof decodeJson>>()
  return (text: string) => {
    let result = decoded.get(text)
    if (result === undefined) {
      // Bounded: a program that answers ever-new decisions (a changing reason, say) only churns it.
      if (decoded.size >= 1024) decoded.clear()
      decoded.set(text, result = decodeJson(text))
    }
    return result
  }
}

/** A loaded program as the engine's `Decider`. */
export const makeDecider = (sandbox: Sandbox, helpers: Helpers, run: ProgramRun): Decider => {
  const { budget, own, vm } = sandbox
  const driver = own(vm.unwrapResult(vm.callFunction(
    helpers.makeDriver,
    vm.undefined,
    helpers.decide,
    own(vm.newString(JSON.stringify(run.symbols))),
    own(vm.newString(run.timeframe)),
    own(vm.newNumber(timeframeMillis[run.timeframe])),
    own(vm.newString(JSON.stringify((run.timeframes ?? []).map((t) => [t, timeframeMillis[t]])))),
    own(vm.newString(JSON.stringify(run.params ?? {})))
  )))
  const symbolCount = run.symbols.length
  const slotOf = new Map(run.symbols.map((symbol, s) => [symbol, s]))
  const [chunk, wanted, account, decide, at] = ["chunk", "wanted", "account", "decide", "at"].map((name) =>
    own(vm.getProp(driver, name))
  ) as [QuickJSHandle, QuickJSHandle, QuickJSHandle, QuickJSHandle, QuickJSHandle]
  const decodeDecision = decisionDecoder()
  /** The answer as one decision per symbol of the run: each names its symbol, or means the first. */
  const perSymbol = (answer: Decision | ReadonlyArray<Decision>, invalid: (message: string) => never) => {
    const decisions: Array<Decision> = run.symbols.map(() => hold)
    const named = new Set<number>()
    for (const decision of Array.isArray(answer) ? answer : [answer as Decision]) {
      const slot = slotOf.get(decision.symbol ?? run.symbols[0]!)
      if (slot === undefined) {
        return invalid(`decide named ${decision.symbol}, which this run does not trade (${run.symbols.join(", ")})`)
      }
      if (named.has(slot)) return invalid(`decide answered more than one decision for ${run.symbols[slot]}`)
      named.add(slot)
      decisions[slot] = decision
    }
    return decisions
  }
  const indicators = makeWindowIndicators(candleWindow)
  let bars: ReadonlyArray<ReadonlyArray<Candle>> = []
  /** The account the sandbox was last sent (position, balance and band, as `account` takes them). */
  let sent = new Float64Array(0)
  /** The bars of `bars` the sandbox holds now, and how many the next piece may hold. */
  let pieceStart = 0, pieceEnd = 0, pieceSize = firstPiece
  const fail = (index: number, reason: ProgramRunError["reason"], message: string): never => {
    throw new ProgramRunError({ reason, message, time: bars[0]![index]!.time })
  }
  /**
   * Fails the run for an error that escaped the driver's own try/catch: only an interrupt or an
   * exhausted heap does (a stall of the safety net has been thrown as `SandboxStalled` before).
   */
  const escaped = (error: QuickJSHandle, index: number, overBudget: boolean): never => {
    if (overBudget) {
      error.dispose()
      return fail(index, "cpu_budget_exceeded", "decide exceeded its CPU budget")
    }
    return fail(
      index,
      "memory_exceeded",
      `decide exhausted its memory: ${firstLine(describeError(sandbox, helpers.describe, error))}`
    )
  }
  /** Calls a function of the driver that runs none of the program's code, for bar `index`. */
  const callDriver = (fn: QuickJSHandle, index: number, ...args: Array<QuickJSHandle>) => {
    budget.start(1)
    const result = vm.callFunction(fn, vm.undefined, ...args)
    for (const handle of args) handle.dispose()
    if (result.error) {
      budget.throwIfStalled(result.error)
      return escaped(result.error, index, budget.exceeded)
    }
    return result.value
  }
  /** Hands the sandbox the bars from `start` on, with the host's indicator values for them. */
  const loadPiece = (start: number) => {
    const pieces = bars.map((symbolBars) => symbolBars.slice(start, start + pieceSize))
    const piece = pieces[0]!
    pieceSize = Math.min(barsPerPiece, 2 * pieceSize)
    const asked = callDriver(wanted, start)
    indicators.want(vm.getString(asked))
    asked.dispose()
    const values = indicators.chunk(piece)
    // One column per field and symbol, which the driver reads in place.
    const n = piece.length, buffer = new Float64Array(n * barFields * symbolCount)
    pieces.forEach((symbolPiece, s) => {
      const o = s * barFields * n
      symbolPiece.forEach((bar, i) => {
        buffer[o + i] = bar.time
        buffer[o + n + i] = bar.open
        buffer[o + 2 * n + i] = bar.high
        buffer[o + 3 * n + i] = bar.low
        buffer[o + 4 * n + i] = bar.close
        buffer[o + 5 * n + i] = bar.volume
      })
    })
    callDriver(
      chunk,
      start,
      vm.newArrayBuffer(buffer.buffer),
      vm.newNumber(n),
      vm.newArrayBuffer(values.buffer.buffer),
      vm.newString(values.calls)
    ).dispose()
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
      const next = new Float64Array(1 + 6 * symbolCount)
      next[0] = balance
      positions.forEach((p, s) => {
        next.set([
          p === null ? 0 : p.side === "long" ? 1 : -1,
          p?.size ?? 0,
          p?.entry_price ?? 0,
          p?.leverage ?? 0,
          bands[s]!.floor,
          bands[s]!.ceiling
        ], 1 + 6 * s)
      })
      if (next.some((n, i) => n !== sent[i])) {
        callDriver(account, from, vm.newArrayBuffer(next.buffer)).dispose()
        sent = next
      }
      const to = Math.min(pieceEnd, from + barsPerCall, until)
      const args = [vm.newNumber(from - pieceStart), vm.newNumber(to - pieceStart), holds ? vm.true : vm.false]
      budget.start(to - from)
      const result = vm.callFunction(decide, vm.undefined, ...args)
      for (const handle of args) handle.dispose()
      if (result.error) {
        budget.throwIfStalled(result.error)
        const overBudget = budget.exceeded
        const index = callDriver(at, from)
        // Stopped before its first bar (at is -1 then), the call is charged to that bar.
        const stoppedAt = pieceStart + Math.max(vm.getNumber(index), from - pieceStart)
        index.dispose()
        return escaped(result.error, stoppedAt, overBudget)
      }
      // A number is where the run stopped without a decision; a decision's text reads as NaN.
      const stopped = vm.getNumber(result.value)
      if (!Number.isNaN(stopped)) {
        result.value.dispose()
        return { index: pieceStart + stopped }
      }
      const text = vm.getString(result.value)
      result.value.dispose()
      const colon = text.indexOf(":")
      const index = pieceStart + Number(text.slice(0, colon))
      const answer = text.slice(colon + 1)
      if (answer.startsWith("!")) {
        return fail(
          index,
          exhausted.test(answer) ? "memory_exceeded" : "threw",
          `decide threw ${firstLine(answer.slice(1))}`
        )
      }
      if (answer === "promise") {
        return fail(
          index,
          "invalid_decision",
          "decide returned a Promise; it must return its decision directly (decide cannot be async)"
        )
      }
      const decided = Either.getOrElse(
        decodeDecision(answer),
        (e) =>
          fail(
            index,
            "invalid_decision",
            `decide returned an invalid decision: ${summarizeIssues(parseErrorIssues(e)).slice(0, 500)}`
          )
      )
      return { index, decisions: perSymbol(decided, (message) => fail(index, "invalid_decision", message)) }
    }
  }
}
