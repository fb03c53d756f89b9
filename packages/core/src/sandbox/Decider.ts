import type { Candle } from "../venues/Venue.js"
import type { AccountView, Decision, PositionView } from "./Decision.js"

/** Bars of one or more symbols, one array per symbol, aligned: the same times in each. */
export type Bars = ReadonlyArray<ReadonlyArray<Candle>>

/** A program as one function called once per bar, oldest first; may throw `ProgramRunError`. */
export type Decide = (bar: Candle, account: AccountView) => Decision

/**
 * The prices at which the open position exits inside a bar: a bar with `low <= floor` or
 * `high >= ceiling` touches its stop, liquidation or take-profit. Unbounded when flat.
 */
export interface ExitBand {
  readonly floor: number
  readonly ceiling: number
}

/**
 * Where `Decider.decide` stopped; `decisions` (one per symbol of the run, in its order, a hold
 * where the program named none) is absent when it stopped before feeding bar `index`.
 */
export interface DecisionStop {
  readonly index: number
  readonly decisions?: ReadonlyArray<Decision>
}

/** The account before a bar: the balance, and each symbol's position (null when flat). */
export interface AccountState {
  readonly balance: number
  readonly positions: ReadonlyArray<PositionView | null>
}

/**
 * A program as the engine drives it: one chunk of bars at a time (one array per symbol, aligned),
 * asking only where something can change, so a runtime can decide a run of quiet bars in one
 * call. `decide` feeds the chunk's bars from `from` on to the program, each with `account` and its
 * equity marked to the bar's close, and stops at the first bar whose decision is not hold; before
 * feeding a bar that touches its symbol's band in `bands` (which the engine settles first); before
 * bar `until` when given (where the account changes, by a funding payment); or wherever it likes
 * (the engine asks again from there). With `holds`, a hold stops it too, with its decisions (a
 * live run's last bar, whose reason is shown). It may throw `ProgramRunError`.
 */
export interface Decider {
  readonly chunk: (bars: Bars) => void
  readonly decide: (
    from: number,
    account: AccountState,
    bands: ReadonlyArray<ExitBand>,
    until?: number,
    holds?: boolean
  ) => DecisionStop
}

const touches = (bar: Candle, band: ExitBand) => bar.low <= band.floor || bar.high >= band.ceiling

/** The `Decider` of a per-bar function of one symbol, for programs written in the host's JavaScript. */
export const decideEachBar = (decide: Decide): Decider => {
  let bars: ReadonlyArray<Candle> = []
  return {
    chunk: (chunk) => {
      bars = chunk[0]!
    },
    decide: (from, { balance, positions: [p = null] }, [band], until = bars.length, holds = false) => {
      for (let i = from; i < until; i++) {
        const bar = bars[i]!
        if (touches(bar, band!)) return { index: i }
        const equity = p === null
          ? balance
          : balance + (p.side === "long" ? 1 : -1) * p.size * (bar.close - p.entry_price)
        const decision = decide(bar, { position: p, balance, equity })
        if (holds || decision.operation !== "hold") return { index: i, decisions: [decision] }
      }
      return { index: until }
    }
  }
}
