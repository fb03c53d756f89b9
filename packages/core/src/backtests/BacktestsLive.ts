import { Layer } from "effect"
import { BacktestRetentionLive } from "./BacktestRetention.js"
import { BacktestRobustness } from "./BacktestRobustness.js"
import { Backtests } from "./Backtests.js"
import { BacktestsRepo } from "./BacktestsRepo.js"
import { BacktestWorkersLive } from "./BacktestWorkers.js"

export { BacktestRobustness, Backtests }

/**
 * Backtests as durable jobs: the service that queues them and this instance's workers that run
 * them, for as long as the layer lives, the purge of old finished ones, and the robustness figures
 * of completed ones.
 */
export const BacktestsLive = Layer.mergeAll(
  Backtests.Default,
  BacktestRobustness.Default,
  BacktestWorkersLive,
  BacktestRetentionLive
).pipe(
  Layer.provideMerge(BacktestsRepo.Default)
)
