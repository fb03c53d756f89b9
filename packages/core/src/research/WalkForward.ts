import { Either } from "effect"
import type { EquityPoint } from "../backtests/Backtest.js"
import type { InvalidInput } from "../http/ErrorClasses.js"
import { invalidField } from "../http/InvalidField.js"
import type { WalkForward } from "./Optimization.js"

/** A window of bars, as epoch milliseconds from `start` (its first bar's open) to `end` (excluded). */
export interface Window {
  readonly start: number
  readonly end: number
}

/** One fold: the window searched and the window its best point is tested on (none without walk-forward). */
export interface FoldWindows {
  readonly fold: number
  readonly inSample: Window
  readonly outOfSample: Window | null
}

/**
 * The folds of a search over `[start, end)` in bars of `step` milliseconds: one fold over the whole
 * range without walk-forward; with it, each fold's in-sample window followed by its out-of-sample
 * one, rolling (every in-sample window as long) or anchored (all starting at the first bar). The
 * last out-of-sample window must end within the range (400 naming `walk_forward`).
 */
export const foldsOf = (
  start: number,
  end: number,
  step: number,
  walkForward: WalkForward | undefined
): Either.Either<ReadonlyArray<FoldWindows>, InvalidInput> => {
  if (walkForward === undefined) return Either.right([{ fold: 0, inSample: { start, end }, outOfSample: null }])
  const first = Math.ceil(start / step) * step
  const { folds, in_sample_bars: inBars, mode, out_of_sample_bars: outBars } = walkForward
  const needed = inBars + folds * outBars
  const available = Math.floor((end - first) / step)
  if (needed > available) {
    return Either.left(
      invalidField(
        "walk_forward",
        `needs in_sample_bars + folds × out_of_sample_bars = ${needed} bars, but the range has ${available}`
      )
    )
  }
  return Either.right(Array.from({ length: folds }, (_, fold) => {
    const split = first + (inBars + fold * outBars) * step
    return {
      fold,
      inSample: { start: mode === "anchored" ? first : split - inBars * step, end: split },
      outOfSample: { start: split, end: split + outBars * step }
    }
  }))
}

/**
 * The out-of-sample curves chained into one, as if the balance carried over: each fold's curve
 * (which starts from `initial`) is scaled by where the chain stood when it began. Also the return
 * of the whole chain, in percent.
 */
export const stitch = (curves: ReadonlyArray<ReadonlyArray<EquityPoint>>, initial: number) => {
  let scale = 1
  const points: Array<EquityPoint> = []
  for (const curve of curves) {
    for (const point of curve) points.push({ time: point.time, equity: point.equity * scale })
    const last = curve.at(-1)
    if (last !== undefined) scale *= last.equity / initial
  }
  return { equity_curve: points, return_percent: (scale - 1) * 100 }
}
