/**
 * The sandbox's side of a run (see `GuestSource.ts`, which hands it the rest of its scope): it
 * must use nothing but its own body, its arguments and the sandbox's globals.
 */

/** A bar as programs see it. */
interface GuestBar {
  time: number
  open: number
  high: number
  low: number
  close: number
  volume: number
}

/** Where the driver is in the current piece: the index of the bar it decides (-1 before the first). */
export interface GuestCursor {
  at: number
}

/** The `ta` programs see, made from the window the driver keeps (see `WindowIndicators.ts`). */
export interface GuestWindow {
  readonly windowTa: object
  readonly installWindow: (values: ArrayBuffer, calls: string) => void
  readonly wantedWindow: () => string
  readonly windowOutOfOrder: () => void
}

export type MakeGuestWindow = (
  ta: object,
  candles: Array<GuestBar>,
  cursor: GuestCursor,
  stringify: typeof JSON.stringify,
  parse: typeof JSON.parse,
  Float64: typeof Float64Array
) => GuestWindow

/**
 * Runs once in each sandbox, before the program: meters the built-ins, seeds `Math.random`,
 * replaces the clock with the current bar's time, installs `ta`, and answers `describe` (an
 * error as one line of text) and `makeDriver`, which the host drives: `chunk` takes the next piece
 * of bars as a buffer of six Float64 columns (time, open, high, low, close, volume), their count,
 * and the host's indicator values for them (see WindowIndicators.ts); `wanted` answers the
 * indicator calls the host should compute from the next piece on; `account` takes the position,
 * balance and exit band after a fill; and `decide` runs the program over the bars as
 * `Decider.decide` does (its third argument is `holds`). It answers the index where it stopped without a decision, or
 * `"<index>:<decision as JSON>"`, or `"<index>:!<message>"` when the program threw; `at` answers
 * the bar being decided (-1 before the piece's first).
 */
export function bootstrap(
  seed: number,
  candleWindow: number,
  installMetering: () => void,
  makeTa: () => object,
  makeWindow: MakeGuestWindow
) {
  // The driver's own calls use the unmetered built-ins.
  const shift = Array.prototype.shift, stringify = JSON.stringify, parse = JSON.parse, Float64 = Float64Array
  installMetering()
  let state = seed >>> 0
  Math.random = function random() {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  let now = 0
  const RealDate = Date
  function SandboxDate(...args: Array<never>) {
    if (new.target === undefined) return new RealDate(now).toString()
    return args.length === 0 ? new RealDate(now) : new (RealDate as new(...args: Array<never>) => Date)(...args)
  }
  SandboxDate.prototype = RealDate.prototype
  SandboxDate.now = () => now
  SandboxDate.parse = RealDate.parse
  SandboxDate.UTC = RealDate.UTC
  Object.defineProperty(RealDate.prototype, "constructor", { value: SandboxDate })
  globalThis.Date = SandboxDate as unknown as DateConstructor
  const ta = makeTa()
  // The window of candles the driver keeps, and the index in the chunk of the bar it decides.
  const candles: Array<GuestBar> = []
  const cursor: GuestCursor = { at: -1 }
  const { installWindow, wantedWindow, windowOutOfOrder, windowTa } = makeWindow(
    ta,
    candles,
    cursor,
    stringify,
    parse,
    Float64
  )
  Object.defineProperty(globalThis, "ta", { value: windowTa })
  const describe = (e: unknown) => {
    try {
      const text = e instanceof Error ? e.name + ": " + e.message + "\n" + e.stack : String(e)
      return text.slice(0, 1000)
    } catch {
      return "a value that cannot be shown"
    }
  }
  const makeDriver = (decide: (data: unknown) => unknown, symbol: string, timeframe: string, paramsJson: string) => {
    const data = {
      symbol,
      timeframe,
      bar: null as GuestBar | null,
      candles,
      position: null as object | null,
      balance: 0,
      equity: 0,
      params: parse(paramsJson)
    }
    let count = 0, side = 0, size = 0, entry = 0, balance = 0, floor = 0, ceiling = 0
    let times = new Float64(0), opens = times, highs = times, lows = times, closes = times, volumes = times
    const chunk = (buffer: ArrayBuffer, bars: number, values: ArrayBuffer, calls: string) => {
      // Every bar of the last chunk must have been appended, for the window to stay the host's.
      if (cursor.at + 1 !== count) windowOutOfOrder()
      count = bars
      const column = (f: number) => new Float64(buffer, f * count * 8, count)
      times = column(0)
      opens = column(1)
      highs = column(2)
      lows = column(3)
      closes = column(4)
      volumes = column(5)
      cursor.at = -1
      installWindow(values, calls)
    }
    // The account changes only on fills, so the host sends it only then, as one buffer.
    const account = (buffer: ArrayBuffer) => {
      const a = new Float64(buffer)
      side = a[0]!
      size = a[1]!
      entry = a[2]!
      balance = a[4]!
      floor = a[5]!
      ceiling = a[6]!
      data.position = side === 0
        ? null
        : { side: side > 0 ? "long" : "short", size, entry_price: entry, leverage: a[3] }
      data.balance = balance
    }
    const decideFrom = (from: number, to: number, holds: boolean) => {
      if (from !== cursor.at + 1) windowOutOfOrder()
      try {
        for (let i = from; i < to; i++) {
          const high = highs[i]!, low = lows[i]!
          if (low <= floor || high >= ceiling) return i
          cursor.at = i
          now = times[i]!
          const close = closes[i]!, bar = { time: now, open: opens[i]!, high, low, close, volume: volumes[i]! }
          // Neither push nor the window's shift may be the program's own.
          candles[candles.length] = bar
          if (candles.length > candleWindow) shift.call(candles)
          data.bar = bar
          data.equity = side === 0 ? balance : balance + side * size * (close - entry)
          const d = decide(data) as { operation?: unknown; then?: unknown } | null
          // A Promise (an async decide) would stringify as {}; it is named instead.
          if (holds || d === null || typeof d !== "object" || d.operation !== "hold") {
            return i + ":" + (typeof d?.then === "function" ? "promise" : (stringify(d) ?? "undefined"))
          }
        }
      } catch (e) {
        return cursor.at + ":!" + describe(e)
      }
      return to
    }
    return { chunk, wanted: wantedWindow, account, decide: decideFrom, at: () => cursor.at }
  }
  return { describe, makeDriver }
}
