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

/** The step counter of a program run in V8 (see `installStepCounter` in `Metering.ts`). */
export interface GuestStepCounter {
  readonly begin: (limit: number) => void
  readonly end: () => boolean
  readonly metered: <A>(limit: number, f: () => A) => A
  readonly nextBar: () => boolean
  readonly charge: (elements: number) => void
}

/**
 * Where the driver is in the current piece: the index of the bar it decides (-1 before the first);
 * and, in QuickJS, whose host counts the steps, whether the call has spent a bar's budget (the
 * host sets it; see `nextBar` in `installStepCounter` for V8).
 */
export interface GuestCursor {
  at: number
  spent: boolean
}

/** The `ta` programs see, made from the window the driver keeps (see `WindowIndicators.ts`). */
export interface GuestWindow {
  readonly windowTa: object
  readonly installWindow: (values: ArrayBuffer, calls: string) => void
  readonly wantedWindow: () => string
  readonly windowOutOfOrder: () => void
  /** Starts over on a new window, as made (a run after another in the same context). */
  readonly resetWindow: (candles: Array<GuestBar>) => void
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
 * error as one line of text) and `makeDriver`, which the host drives for a run of one or more
 * symbols (the first is `data.symbol`): `chunk` takes the next piece of bars as a buffer of six
 * Float64 columns per symbol (time, open, high, low, close, volume; symbol after symbol), their
 * count, and the host's indicator values for the first symbol's window (see WindowIndicators.ts);
 * `wanted` answers the indicator calls the host should compute from the next piece on; and `decide`
 * runs the program over the bars as `Decider.decide` does (its third argument is `holds`), first
 * taking the account when one follows (the balance and, per symbol, the position and exit band,
 * sent only after a fill, in the same call rather than one of its own: in QuickJS a buffer as the
 * fourth argument, in V8 the numbers after `holds`, which cross without a copy). It answers
 * the index where it stopped without a decision, or `"<index>:<answer as JSON>"` (a decision, or a
 * list of them), or `"<index>:!<message>"` when the program threw; `at` answers the bar being
 * decided (-1 before the piece's first). `decide` answers early, with the index of the next bar,
 * once the call has spent one bar's budget. Beside `describe` and `makeDriver`, it answers
 * `cursor`, which the QuickJS host reads to tell the bars apart (see `Sandbox.ts`).
 *
 * With a `counter` (V8, whose program counts its steps, see `StepCounting.ts`), every step past a
 * call's limit (a bar's, in `decide`) throws `overMessage`; each function of the driver then
 * takes its call's limit of steps first, and `begin` and `end` bracket loading the program (see
 * `installStepCounter`).
 * Code made from text is refused on both runtimes, as it would not count its steps.
 */
export function bootstrap(
  seed: number,
  counter: string | undefined,
  overMessage: string,
  candleWindow: number,
  installMetering: (charge: (elements: number) => void) => void,
  installStepCounter: (name: string, overMessage: string) => GuestStepCounter,
  makeRandom: (seed: number) => () => number,
  makeTa: () => object,
  makeWindow: MakeGuestWindow,
  watchRealm: () => () => boolean
) {
  // The driver's own calls use the unmetered built-ins.
  const shift = Array.prototype.shift, isArray = Array.isArray, stringify = JSON.stringify, parse = JSON.parse
  const Float64 = Float64Array
  // Code made from text at run time (eval, the Function constructors) would not have its steps
  // counted in V8, and a program has no need of it: refused on both runtimes alike.
  const refuse = function() {
    throw new EvalError("a program cannot run code made from text (eval, Function)")
  }
  refuse.prototype = Function.prototype
  for (const made of [function() {}, function*() {}, async function() {}, async function*() {}]) {
    Object.defineProperty(Object.getPrototypeOf(made), "constructor", { value: refuse })
  }
  globalThis.eval = refuse
  globalThis.Function = refuse as unknown as FunctionConstructor
  // Counted by the runtime (QuickJS), a built-in's work is charged as an empty loop of as many steps.
  const steps = counter === undefined ? undefined : installStepCounter(counter, overMessage)
  installMetering(
    steps?.charge ?? ((elements) => {
      for (let i = Math.floor(elements / 64); i > 0; i--);
    })
  )
  // The generator is replaced for each run; the function programs see stays the same.
  let draw = makeRandom(seed)
  Math.random = () => draw()
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
  let candles: Array<GuestBar> = []
  const cursor: GuestCursor = { at: -1, spent: false }
  const nextBar = steps?.nextBar ?? (() => cursor.spent)
  const { installWindow, resetWindow, wantedWindow, windowOutOfOrder, windowTa } = makeWindow(
    ta,
    candles,
    cursor,
    stringify,
    parse,
    Float64
  )
  Object.defineProperty(globalThis, "ta", { value: windowTa })
  /** Whether an answer is a hold, or a list of holds (a program trading several symbols answers a list). */
  const holdsAll = (d: unknown): boolean => {
    if (d === null || typeof d !== "object") return false
    if (!isArray(d)) return (d as { operation?: unknown }).operation === "hold"
    for (let k = 0; k < d.length; k++) {
      const item = d[k] as { operation?: unknown } | null
      if (item === null || typeof item !== "object" || item.operation !== "hold") return false
    }
    return true
  }
  const describe = (e: unknown) => {
    try {
      const text = e instanceof Error ? e.name + ": " + e.message + "\n" + e.stack : String(e)
      return text.slice(0, 1000)
    } catch {
      return "a value that cannot be shown"
    }
  }
  const makeDriver = (
    decide: (data: unknown) => unknown,
    symbolsJson: string,
    timeframe: string,
    baseMillis: number,
    framesJson: string,
    paramsJson: string
  ) => {
    // Index loops only: the program has run by now, and may have replaced Array.prototype's methods and iterator.
    const symbols: Array<string> = parse(symbolsJson)
    // The longer timeframes, as [name, length in ms]: each symbol's closed candles of each.
    const frames: Array<[string, number]> = parse(framesJson)
    type Market = {
      view: {
        symbol: string
        bar: GuestBar | null
        candles: Array<GuestBar>
        position: object | null
        timeframes: Record<string, Array<GuestBar>>
      }
      // The candle of each longer timeframe being built, and whether it began at its period's start.
      building: Array<{ bar: GuestBar | null; whole: boolean }>
    }
    const markets: Array<Market> = []
    const bySymbol: Record<string, object> = {}
    for (let s = 0; s < symbols.length; s++) {
      const timeframes: Record<string, Array<GuestBar>> = {}
      const building: Market["building"] = []
      for (let f = 0; f < frames.length; f++) {
        timeframes[frames[f]![0]] = []
        building[f] = { bar: null, whole: false }
      }
      const view = { symbol: symbols[s]!, bar: null, candles: s === 0 ? candles : [], position: null, timeframes }
      markets[s] = { view, building }
      bySymbol[view.symbol] = view
    }
    const first = markets[0]!.view
    const data = {
      symbol: first.symbol,
      timeframe,
      bar: null as GuestBar | null,
      candles,
      position: null as object | null,
      timeframes: first.timeframes,
      symbols: bySymbol,
      balance: 0,
      equity: 0,
      params: parse(paramsJson)
    }
    const n = markets.length
    // Per symbol: side (+1, -1, 0 flat), size, entry price, and the exit band.
    const sides = new Float64(n), sizes = new Float64(n), entries = new Float64(n)
    const floors = new Float64(n), ceilings = new Float64(n)
    let count = 0, balance = 0, columns = new Float64(0), stride = 0
    const chunk = (buffer: ArrayBuffer, bars: number, values: ArrayBuffer, calls: string) => {
      // Every bar of the last chunk must have been appended, for the window to stay the host's.
      if (cursor.at + 1 !== count) windowOutOfOrder()
      count = bars
      columns = new Float64(buffer)
      stride = 6 * count
      cursor.at = -1
      installWindow(values, calls)
    }
    const account = (a: ArrayLike<number>) => {
      balance = a[0]!
      for (let s = 0; s < n; s++) {
        const o = 1 + 6 * s
        sides[s] = a[o]!
        sizes[s] = a[o + 1]!
        entries[s] = a[o + 2]!
        floors[s] = a[o + 4]!
        ceilings[s] = a[o + 5]!
        markets[s]!.view.position = sides[s] === 0
          ? null
          : { side: sides[s]! > 0 ? "long" : "short", size: sizes[s], entry_price: entries[s], leverage: a[o + 3] }
      }
      data.position = first.position
      data.balance = balance
    }
    /** Adds a closed bar to the longer timeframes' candles being built; one whose period ends with it closes. */
    const aggregate = (market: Market, bar: GuestBar) => {
      for (let f = 0; f < frames.length; f++) {
        const name = frames[f]![0], length = frames[f]![1]
        const building = market.building[f]!
        const start = bar.time - (bar.time % length)
        const current = building.bar
        if (current === null || current.time !== start) {
          building.bar = {
            time: start,
            open: bar.open,
            high: bar.high,
            low: bar.low,
            close: bar.close,
            volume: bar.volume
          }
          building.whole = bar.time === start
        } else {
          if (bar.high > current.high) current.high = bar.high
          if (bar.low < current.low) current.low = bar.low
          current.close = bar.close
          current.volume += bar.volume
        }
        // The last bar of the period closes its candle; one that began before the first bar seen is left out.
        if (bar.time + baseMillis === start + length && building.whole) {
          const closed = market.view.timeframes[name]!
          closed[closed.length] = building.bar!
          if (closed.length > candleWindow) shift.call(closed)
          building.bar = null
        }
      }
    }
    const decideFrom = (from: number, to: number, holds: boolean, next: ArrayLike<number> | undefined) => {
      if (from !== cursor.at + 1) windowOutOfOrder()
      if (next !== undefined) account(next)
      cursor.spent = false
      try {
        for (let i = from; i < to; i++) {
          // Each bar has its own budget (V8 starts counting it now; QuickJS's host sees the cursor
          // move). A call that has spent a bar's budget on its bars so far hands back to the host,
          // which calls again from here: however many bars a call holds, it runs at most about two
          // bars' budget, far inside the wall-clock net.
          if (nextBar() && i > from) return i
          for (let s = 0, o = 0; s < n; s++, o += stride) {
            if (columns[o + 3 * count + i]! <= floors[s]! || columns[o + 2 * count + i]! >= ceilings[s]!) return i
          }
          cursor.at = i
          now = columns[i]!
          let equity = balance
          for (let s = 0, o = 0; s < n; s++, o += stride) {
            const market = markets[s]!
            const close = columns[o + 4 * count + i]!
            const bar = {
              time: now,
              open: columns[o + count + i]!,
              high: columns[o + 2 * count + i]!,
              low: columns[o + 3 * count + i]!,
              close,
              volume: columns[o + 5 * count + i]!
            }
            // Neither push nor the window's shift may be the program's own.
            const window = market.view.candles
            window[window.length] = bar
            if (window.length > candleWindow) shift.call(window)
            market.view.bar = bar
            if (frames.length > 0) aggregate(market, bar)
            equity += sides[s]! * sizes[s]! * (close - entries[s]!)
          }
          data.bar = first.bar
          data.equity = equity
          const d = decide(data) as { operation?: unknown; then?: unknown } | null
          // A Promise (an async decide) would stringify as {}; it is named instead.
          if (holds || !holdsAll(d)) {
            return i + ":" + (typeof d?.then === "function" ? "promise" : (stringify(d) ?? "undefined"))
          }
        }
      } catch (e) {
        return cursor.at + ":!" + describe(e)
      }
      return to
    }
    const at = () => cursor.at
    // QuickJS hands the account over as a buffer.
    if (steps === undefined) {
      return {
        chunk,
        wanted: wantedWindow,
        decide: (from: number, to: number, holds: boolean, next: ArrayBuffer | undefined) =>
          decideFrom(from, to, holds, next === undefined ? undefined : new Float64(next)),
        at
      }
    }
    // Counted by the guest (V8): each function takes its call's limit of steps first.
    const { metered } = steps
    return {
      chunk: (limit: number, values: ArrayBuffer, bars: number, indicators: ArrayBuffer, calls: string) =>
        metered(limit, () => chunk(values, bars, indicators, calls)),
      wanted: (limit: number) => metered(limit, wantedWindow),
      // V8 hands the account over as numbers, the arguments after `holds`: numbers cross without a copy.
      decide: (limit: number, from: number, to: number, holds: boolean, ...next: Array<number>) =>
        metered(limit, () => decideFrom(from, to, holds, next.length === 0 ? undefined : next)),
      at: (limit: number) => metered(limit, at)
    }
  }
  let unchanged: (() => boolean) | undefined
  /** Records the realm (see `watchRealm`), before the first program runs, so that later runs may reuse the context. */
  const watch = () => {
    unchanged = watchRealm()
  }
  /**
   * Readies the context for another run of the same program, seeded with `next`, as a fresh one
   * would be (the clock, the window, `Math.random`), if the runs before left the realm as
   * recorded; answers whether they did (if not, the context must not be used again).
   */
  const reuse = (next: number): boolean => {
    if (unchanged === undefined || !unchanged()) return false
    draw = makeRandom(next)
    now = 0
    candles = []
    cursor.at = -1
    resetWindow(candles)
    return true
  }
  return { describe, makeDriver, begin: steps?.begin, end: steps?.end, watch, reuse, cursor }
}
