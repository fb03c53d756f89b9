import { taSource } from "../indicators/TaSource.js"
import { mulberry32 } from "../stats/Random.js"
import { bootstrap } from "./guest/Bootstrap.js"
import { installMetering } from "./guest/Metering.js"
import { candleWindow } from "./SandboxLimits.js"
import { windowIndicatorsSource } from "./WindowIndicatorsSource.js"

/**
 * The source the sandbox runs before a program: a function of the seed that answers `describe`
 * and `makeDriver` (see `guest/Bootstrap.ts`). The guest's own code is the text of real functions,
 * type-checked with the host's. `ta` stays source text, which the host runs too (the same text, so
 * the same values), and so do the window indicators, which are generated from the host's tables.
 *
 * A compiler that keeps function names (tsx does) wraps functions in calls to a `__name` helper of
 * the module, which the sandbox does not have; `__name` is defined here to do the same, with
 * `Object.defineProperty` taken before any program runs.
 */
export const guestSource = `(function (seed) {
  "use strict"
  const __name = ((define) => (target, value) => define(target, "name", { value, configurable: true }))(Object.defineProperty)
  return (${bootstrap})(
    seed,
    ${candleWindow},
    ${installMetering},
    ${mulberry32},
    () => {
      ${taSource}
      return ta
    },
    (ta, candles, cursor, stringify, parse, Float64) => {
      ${windowIndicatorsSource}
      return { windowTa, installWindow, wantedWindow, windowOutOfOrder }
    }
  )
})`
