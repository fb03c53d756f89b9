import { Layer } from "effect"
import { BacktestRetentionLive } from "./BacktestRetention.js"
import { Backtests } from "./Backtests.js"
import { BacktestsRepo } from "./BacktestsRepo.js"
import { BacktestWorkersLive } from "./BacktestWorkers.js"

export { Backtests }

/**
 * Backtests as durable jobs: the service that queues them and this instance's workers that run
 * them, for as long as the layer lives, and the purge of old finished ones.
 */
export const BacktestsLive = Layer.mergeAll(Backtests.Default, BacktestWorkersLive, BacktestRetentionLive).pipe(
  Layer.provideMerge(BacktestsRepo.Default)
)
