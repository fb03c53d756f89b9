import { Effect, Layer } from "effect"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { Arena, ArenaPnlRefresherLive } from "./Arena.js"
import { ArenaRepo } from "./ArenaRepo.js"

export { Arena }

/**
 * The arena: the service, and on instances that take part in automation (AUTOMATION_ENABLED) the
 * PnL refresher, which holds a lease. Needs automation's positions and the leases.
 */
export const ArenaLive = Layer.mergeAll(
  Arena.Default,
  Layer.unwrapEffect(
    Effect.map(PlatformConfig, ({ automation }) => automation.enabled ? ArenaPnlRefresherLive : Layer.empty)
  )
).pipe(Layer.provideMerge(ArenaRepo.Default))
