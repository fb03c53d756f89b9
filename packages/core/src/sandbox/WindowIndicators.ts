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

/** One call's values at each bar of one sequence of candles, from the bar at `start` of the sequence on. */
interface Column {
  readonly start: number
  readonly bars: Array<Candle>
  values: Float64Array
}

/** The most bars a column keeps (2 MB of values): a longer run computes the bars after them itself. */
const maxColumnBars = 50_000
/** The most columns kept; the least recently used is dropped first. */
const maxColumns = 32

/** The columns of one program's runs, one after another on one thread (see `makeIndicatorColumns`). */
export interface IndicatorColumns {
  /** The column of `call` over the candles from `first` on, made at bar `from` of them if there is none. */
  readonly column: (first: Candle, call: string, from: number) => Column
}

/**
 * The host's values kept across the runs of one program (a search's trials, see `RuntimeUse`):
 * runs over the same candles from the same first candle ask for the same values (a grid of 100
 * trials over two averages asks for 20), and recomputing them was a tenth of a trial's time. A
 * value is reused only at the bar it was computed for, over the same candle objects in the same
 * order since the same first one, so it is the double the host would compute again.
 */
export const makeIndicatorColumns = (): IndicatorColumns => {
  // Each first candle's number, for the columns' keys.
  const sequences = new WeakMap<Candle, number>()
  let sequenceCount = 0
  // Most recently used last.
  const columns = new Map<string, Column>()
  return {
    column: (first, call, from) => {
      let sequence = sequences.get(first)
      if (sequence === undefined) sequences.set(first, sequence = sequenceCount++)
      const key = `${sequence} ${call}`
      let column = columns.get(key)
      if (column === undefined) {
        column = { start: from, bars: [], values: new Float64Array(0) }
        if (columns.size >= maxColumns) columns.delete(columns.keys().next().value!)
      } else columns.delete(key)
      columns.set(key, column)
      return column
    }
  }
}

/** Copies the column's values for bar `k` (which must be `bar`) into `buffer` at `o`; false when it has none. */
const readColumn = (column: Column, k: number, bar: Candle, buffer: Float64Array, o: number) => {
  const at = k - column.start
  // Past its ends (or for other candles) the column has no such bar.
  if (column.bars[at] !== bar) return false
  for (let f = 0, v = at * slotWidth; f < slotWidth; f++) buffer[o + f] = column.values[v + f]!
  return true
}

/** Keeps the values just computed for bar `k` when they are the column's next. */
const extendColumn = (column: Column, k: number, bar: Candle, buffer: Float64Array, o: number) => {
  const at = k - column.start
  if (at !== column.bars.length || at === maxColumnBars) return
  if (column.values.length === at * slotWidth) {
    const grown = new Float64Array(Math.min(maxColumnBars, Math.max(1024, 2 * at)) * slotWidth)
    grown.set(column.values)
    column.values = grown
  }
  column.bars.push(bar)
  for (let f = 0, v = at * slotWidth; f < slotWidth; f++) column.values[v + f] = buffer[o + f]!
}

/**
 * Host side of one run: keeps the same window of candles as the sandbox's driver (the last
 * `windowSize` bars) and computes the calls the sandbox asked for over each bar of a chunk, or
 * reads them from `columns` when an earlier run of the program computed them.
 */
export const makeWindowIndicators = (windowSize: number, columns?: IndicatorColumns) => {
  let window: Array<Candle> = []
  const calls: Array<Call> = []
  const computes: Array<ReturnType<typeof compute>> = []
  // Each call's column, found when the call is first computed.
  const kept: Array<Column | undefined> = []
  // Written once per change, not once per piece.
  let callsJson = "[]"
  /** The run's first candle, and how many bars the window has taken. */
  let first: Candle | undefined
  let seen = 0
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
      first ??= bars[0]
      if (stride === 0) {
        // Nothing to compute: only the window moves on.
        window = window.concat(bars).slice(-windowSize)
        seen += bars.length
        return { buffer, calls: callsJson }
      }
      if (columns !== undefined) {
        for (let j = kept.length; j < calls.length; j++) {
          kept.push(columns.column(first!, JSON.stringify(calls[j]), seen))
        }
      }
      for (let i = 0; i < bars.length; i++) {
        const bar = bars[i]!, k = seen + i
        window.push(bar)
        if (window.length > windowSize) window.shift()
        for (let j = 0; j < computes.length; j++) {
          const o = i * stride + j * slotWidth, column = kept[j]
          if (column === undefined) computes[j]!(buffer, o, window)
          else if (!readColumn(column, k, bar, buffer, o)) {
            computes[j]!(buffer, o, window)
            extendColumn(column, k, bar, buffer, o)
          }
        }
      }
      seen += bars.length
      return { buffer, calls: callsJson }
    }
  }
}
