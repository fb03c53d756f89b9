import { Effect } from "effect"
import { Signals } from "../../src/signals/Signals.js"
import type { CurrentUserShape } from "../../src/users/Authentication.js"

/** A pool on BTC (and `symbols`) whose one signal is met while depth_ratio > 1. */
export const depthPool = (caller: CurrentUserShape, symbols: ReadonlyArray<string> = ["BTC"]) =>
  Effect.gen(function*() {
    const signals = yield* Signals
    const signal = yield* signals.create(caller, {
      signal_name: "bids outweigh asks",
      exchange: "venue1",
      trigger_condition: { metric: "depth_ratio", operator: "gt", threshold: 1, time_window: "1m" },
      enabled: true
    })
    return yield* signals.createPool(caller, {
      pool_name: "depth",
      exchange: "venue1",
      source_type: "market_signals",
      source_config: {},
      signal_ids: [signal.id],
      symbols,
      logic: "AND",
      enabled: true
    })
  })
