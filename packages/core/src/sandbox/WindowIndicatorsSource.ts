import { type IndicatorName, indicatorNames } from "../indicators/TaSource.js"

// The sandbox's half of the indicators over the window (see `WindowIndicators.ts`), and the layout both halves share.

/**
 * Numbers per value in the buffer: a tag (0 null, 1 number, 2 object, 3 threw: the sandbox
 * computes it itself, and throws the same way), then up to three fields; the first is NaN for
 * null and a throw, so a number helper reads one value in the common case.
 */
export const slotWidth = 4

/** The most distinct calls the host computes for one run; others are computed in the sandbox. */
export const maxCalls = 16

/** The fields, in order, of the helpers that answer objects. */
export const objectFields: Partial<Record<IndicatorName, ReadonlyArray<string>>> = {
  macd: ["macd", "signal", "histogram"],
  bollinger: ["upper", "middle", "lower"]
}

/** The most whole-number period looked up by index; calls with another first argument are searched. */
const maxIndexedPeriod = 1000

const tables = `{ ${indicatorNames.map((name) => `${name}: { byPeriod: [], others: [] }`).join(", ")} }`

// Object literals, so a setter a program defines on Object.prototype is not called.
const objectReaders = Object.entries(objectFields)
  .map(([name, fields]) =>
    `${name}: (o) => ({ ${fields.map((field, f) => `${field}: windowValues[o + ${f + 1}]`).join(", ")} })`
  )
  .join(", ")

/**
 * The source of a function that makes the `ta` helper `name` of the sandbox: it finds a call on
 * the window among the host's calls by `a` and `extra` (the arguments after the period that the
 * helper reads), and answers from the host's values at offset `o` with `readValue`, which returns
 * or falls through to the sandbox's own computation (the helper threw in the host, or the values
 * are not there). `typeof` comes first: indexing with an object would run its `toString`.
 */
const helperSource = (extra: "b, c" | "undefined, undefined", readValue: string) =>
  `(name) => {
    const plain = ta[name], read = windowObjects[name], byPeriod = windowTables[name].byPeriod, others = windowTables[name].others
    return { [name](values, a, b, c) {
      if (values === windowSeries) {
        let o = typeof a === "number" ${
    extra === "b, c" ? "&& b === undefined && c === undefined " : ""
  }? byPeriod[a] : undefined
        if (o === undefined) o = windowSearch(others, a, ${extra})
        if (o >= 0) {
          o += cursor.at * windowStride
          ${readValue}
        } else want(name, a, ${extra})
      }
      return plain(values, a, b, c)
    } }[name]
  }`

/**
 * Sandbox side, run in the scope `GuestSource.ts` gives it, where `ta` (the plain helpers), `candles`
 * (the window the driver keeps), `cursor.at` (the index in the chunk of the bar being decided) and
 * `stringify`/`parse`/`Float64` (JSON's functions and Float64Array as they were before the
 * program ran) are in scope. Declares `windowTa`, the `ta` programs see; `installWindow(buffer,
 * calls)`, with the host's values for the next piece; `wantedWindow()`, the calls the program
 * made that the host does not compute yet; and `windowOutOfOrder()`, which the driver calls if it
 * ever appends bars out of order: its window would then no longer be the host's, and every call is
 * computed in the sandbox again; and `resetWindow(candles)`, which starts over on a new window
 * (the next run in the same context).
 *
 * The values are for the window as delivered, so a program that changes `data.candles` in place
 * does not change what `ta` answers for it; the docs say so. The code uses no destructuring,
 * iteration or methods that a program could replace. Each helper finds its call's values by the
 * period (`byPeriod[period]`, the offset of its values within a bar's, or -1) when the period is
 * a whole number and the only argument the helper reads, as it nearly always is, and searches
 * `others` ([a, b, c, offset] flat) otherwise: this lookup runs on every call, so it is kept to a
 * few operations.
 */
export const windowIndicatorsSource = `
  const isFiniteNumber = Number.isFinite
  const windowObjects = { ${objectReaders} }
  const windowTables = ${tables}
  const windowTableList = [${indicatorNames.map((name) => `windowTables.${name}`).join(", ")}]
  // The series the host's values are for: the window, until the driver finds it out of order (set by resetWindow below).
  let windowValues, windowStride, windowCalls, windowWanted, windowSeries
  const windowOutOfOrder = () => { windowSeries = [] }
  const clearTables = () => {
    for (let t = 0; t < windowTableList.length; t++) {
      windowTableList[t].byPeriod.length = 0
      windowTableList[t].others.length = 0
    }
  }
  const resetWindow = (series) => {
    windowValues = new Float64(0)
    windowStride = windowCalls = 0
    windowWanted = []
    windowSeries = series
    clearTables()
  }
  resetWindow(candles)
  const installWindow = (buffer, calls) => {
    windowValues = new Float64(buffer)
    clearTables()
    const list = parse(calls)
    windowCalls = list.length
    windowStride = windowCalls * ${slotWidth}
    for (let j = 0; j < windowCalls; j++) {
      const call = list[j], table = windowTables[call[0]], a = call[1] ?? undefined, b = call[2] ?? undefined, c = call[3] ?? undefined
      if (b === undefined && c === undefined && a !== undefined && a >= 0 && a <= ${maxIndexedPeriod} && a % 1 === 0) {
        const byPeriod = table.byPeriod
        while (byPeriod.length < a) byPeriod[byPeriod.length] = -1
        byPeriod[a] = j * ${slotWidth}
      } else {
        const others = table.others, n = others.length
        others[n] = a; others[n + 1] = b; others[n + 2] = c; others[n + 3] = j * ${slotWidth}
      }
    }
    windowWanted = []
  }
  // JSON writes the absent arguments as null.
  const wantedWindow = () => stringify(windowWanted)
  // Finite numbers survive the trip through JSON exactly; -0 becomes 0, which no helper tells apart.
  const windowArgument = (x) => x === undefined || (typeof x === "number" && isFiniteNumber(x))
  const want = (name, a, b, c) => {
    if (windowCalls + windowWanted.length >= ${maxCalls} || !windowArgument(a) || !windowArgument(b) || !windowArgument(c)) return
    for (let j = 0; j < windowWanted.length; j++) {
      const w = windowWanted[j]
      if (w[0] === name && w[1] === a && w[2] === b && w[3] === c) return
    }
    windowWanted[windowWanted.length] = [name, a, b, c]
  }
  const windowSearch = (others, a, b, c) => {
    for (let j = 0; j < others.length; j += 4) if (others[j] === a && others[j + 1] === b && others[j + 2] === c) return others[j + 3]
    return -1
  }
  // sma, ema, rsi and atr read no argument after the period.
  const numberHelper = ${
  helperSource(
    "undefined, undefined",
    `
    // A number is read first: it is nearly always one. Null and a throw are NaN with their tag.
    const v = windowValues[o + 1]
    if (v === v) return v
    const tag = windowValues[o]
    if (tag === 1) return v
    if (tag === 0) return null`
  )
}
  const objectHelper = ${
  helperSource(
    "b, c",
    `
    const tag = windowValues[o]
    if (tag === 2) return read(o)
    if (tag === 0) return null`
  )
}
  const windowTa = Object.freeze({ ${
  indicatorNames.map((name) => `${name}: ${name in objectFields ? "objectHelper" : "numberHelper"}("${name}")`).join(
    ", "
  )
} })
`
