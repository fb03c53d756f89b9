import { Option, Schema } from "effect"
import { hostTa, indicatorNames, type IndicatorValue } from "../indicators/TaSource.js"
import type { Candle } from "../venues/Venue.js"
import { maxCalls, objectFields, slotWidth } from "./WindowIndicatorsSource.js"

/**
 * Indicators over the window of candles, computed by the host.
 *
 * Nearly every program calls `ta` helpers on `data.candles` on every bar, and QuickJS needs
 * about 50 ns per element read, so those calls were most of a backtest's time. The host runs the
 * same helper source in its own engine (bit for bit the same arithmetic) over the same window,
 * for each bar of a piece of bars the sandbox is handed, and the sandbox's `ta` answers such a
 * call from those values. The sandbox learns which calls a program makes by seeing them: a call
 * on `data.candles` whose other arguments are numbers (or absent) is computed in the sandbox the
 * first time and asked of the host from the next piece on.
 */

const Argument = Schema.NullOr(Schema.Number)
const Calls = Schema.parseJson(
  Schema.Array(Schema.Tuple(Schema.Literal(...indicatorNames), Argument, Argument, Argument))
)
type Call = typeof Calls.Type[number]
const decodeCalls = Schema.decodeUnknownOption(Calls)

/** Writes one value at `o` as the sandbox reads it. */
const write = (buffer: Float64Array, o: number, fields: ReadonlyArray<string> | undefined, value: IndicatorValue) => {
  if (value === null) {
    buffer[o + 1] = NaN
    return
  }
  if (typeof value === "number") {
    buffer[o] = 1
    buffer[o + 1] = value
    return
  }
  buffer[o] = 2
  for (let f = 0; f < fields!.length; f++) buffer[o + 1 + f] = value[fields![f]!]!
}

/** One call the host computes: the helper with its arguments, over a window. */
const compute = ([name, a, b, c]: Call) => {
  const helper = hostTa[name], fields = objectFields[name]
  return (buffer: Float64Array, o: number, window: ReadonlyArray<Candle>) => {
    try {
      write(buffer, o, fields, helper(window, a ?? undefined, b ?? undefined, c ?? undefined))
    } catch {
      // Arguments no helper expects (a fractional period reads past the candles) can throw.
      buffer[o] = 3
      buffer[o + 1] = NaN
    }
  }
}

/**
 * Host side of one run: keeps the same window of candles as the sandbox's driver (the last
 * `windowSize` bars) and computes the calls the sandbox asked for over each bar of a chunk.
 */
export const makeWindowIndicators = (windowSize: number) => {
  let window: Array<Candle> = []
  const calls: Array<Call> = []
  const computes: Array<ReturnType<typeof compute>> = []
  // Written once per change, not once per piece.
  let callsJson = "[]"
  return {
    /**
     * Adds the calls the sandbox reported (`wantedWindow()`), up to the cap. A program can make
     * that report unreadable (a `toJSON` on Array.prototype, say); it then only loses the speed.
     */
    want: (wanted: string) => {
      for (const call of Option.getOrElse(decodeCalls(wanted), () => [])) {
        if (calls.length === maxCalls) break
        calls.push(call)
        computes.push(compute(call))
        callsJson = JSON.stringify(calls)
      }
    },
    /** The values of each call at each bar of the next piece, as `installWindow` takes them, and the calls. */
    chunk: (bars: ReadonlyArray<Candle>) => {
      const stride = calls.length * slotWidth
      const buffer = new Float64Array(bars.length * stride)
      if (stride === 0) {
        // Nothing to compute: only the window moves on.
        window = window.concat(bars).slice(-windowSize)
        return { buffer, calls: callsJson }
      }
      for (let i = 0; i < bars.length; i++) {
        window.push(bars[i]!)
        if (window.length > windowSize) window.shift()
        for (let j = 0; j < computes.length; j++) computes[j]!(buffer, i * stride + j * slotWidth, window)
      }
      return { buffer, calls: callsJson }
    }
  }
}
