import { taSource } from "../indicators/TaSource.js"
import { mulberry32 } from "../stats/Random.js"
import { bootstrap } from "./guest/Bootstrap.js"
import { installMetering, installStepCounter } from "./guest/Metering.js"
import { watchRealm } from "./guest/Realm.js"
import { candleWindow } from "./SandboxLimits.js"
import { overBudgetMessage, type StepCounter } from "./StepCounting.js"
import { windowIndicatorsSource } from "./WindowIndicatorsSource.js"

/**
 * The source the sandbox runs before a program: a function of the seed, and of the name of the
 * step counter a program rewritten by `countSteps` calls (V8; none for QuickJS, which counts steps
 * itself), that answers `describe` and `makeDriver` (see `guest/Bootstrap.ts`). The guest's own code is the text of real functions,
 * type-checked with the host's. `ta` stays source text, which the host runs too (the same text, so
 * the same values), and so do the window indicators, which are generated from the host's tables.
 *
 * A compiler that keeps function names (tsx does) wraps functions in calls to a `__name` helper of
 * the module, which the sandbox does not have; `__name` is defined here to do the same, with
 * `Object.defineProperty` taken before any program runs.
 */
const makeGuestSource = (ta: string) =>
  `(function (seed, counter) {
  "use strict"
  const __name = ((define) => (target, value) => define(target, "name", { value, configurable: true }))(Object.defineProperty)
  return (${bootstrap})(
    seed,
    counter,
    ${JSON.stringify(overBudgetMessage)},
    ${candleWindow},
    ${installMetering},
    ${installStepCounter},
    ${mulberry32},
    () => {
      ${ta}
      return ta
    },
    (ta, candles, cursor, stringify, parse, Float64) => {
      ${windowIndicatorsSource}
      return { windowTa, installWindow, wantedWindow, windowOutOfOrder, resetWindow }
    },
    ${watchRealm}
  )
})`

/** The guest for QuickJS, which counts every step itself. */
export const guestSource = makeGuestSource(taSource)

const counted = new Map<string, string>()

/**
 * The guest for V8, with `ta`'s steps counted on `counter` as the program's are (see `countSteps`),
 * so a helper called on a copy of the candles costs the same steps on either runtime.
 */
export const countedGuestSource = (countSteps: StepCounter, counter: string): string => {
  let source = counted.get(counter)
  if (source === undefined) {
    const ta = countSteps(taSource, counter)
    if (!("code" in ta)) throw new Error(`ta's source does not parse: ${ta.text}`)
    counted.set(counter, source = makeGuestSource(ta.code))
  }
  return source
}
