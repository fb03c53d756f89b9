import { Clock, Effect } from "effect"

/** The current time from the Effect `Clock`, so tests can move it (`TestClock`); services stamp rows with it. */
export const now: Effect.Effect<Date> = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
