import { Effect } from "effect"
import type { TriggerCondition } from "../../src/signals/Signal.js"
import { Signals } from "../../src/signals/Signals.js"
import type { CurrentUserShape } from "../../src/users/Authentication.js"

/** A pool (AND) on venue1 over `symbols` of one new signal on `condition`; named after it unless `names` says. */
export const poolOn = (
  caller: CurrentUserShape,
  condition: TriggerCondition,
  symbols: ReadonlyArray<string> = ["BTC"],
  names: { readonly signal: string; readonly pool: string } = {
    signal: `${condition.metric} ${condition.operator} ${condition.threshold} over ${condition.time_window}`,
    pool: condition.metric
  }
) =>
  Effect.gen(function*() {
    const signals = yield* Signals
    const signal = yield* signals.create(caller, {
      signal_name: names.signal,
      exchange: "venue1",
      trigger_condition: condition,
      enabled: true
    })
    return yield* signals.createPool(caller, {
      pool_name: names.pool,
      exchange: "venue1",
      source_type: "market_signals",
      source_config: {},
      signal_ids: [signal.id],
      symbols,
      logic: "AND",
      enabled: true
    })
  })

/** A pool on BTC (and `symbols`) whose one signal is met while depth_ratio > 1. */
export const depthPool = (caller: CurrentUserShape, symbols: ReadonlyArray<string> = ["BTC"]) =>
  poolOn(caller, { metric: "depth_ratio", operator: "gt", threshold: 1, time_window: "1m" }, symbols, {
    signal: "bids outweigh asks",
    pool: "depth"
  })
