import { Layer } from "effect"
import { BacktestRetentionLive } from "./BacktestRetention.js"
import { BacktestRobustness } from "./BacktestRobustness.js"
import { Backtests } from "./Backtests.js"
import { BacktestsRepo } from "./BacktestsRepo.js"
import { BacktestWorkersLive } from "./BacktestWorkers.js"
import { BiasChecks } from "./BiasChecks.js"
import { BiasCheckVerdicts } from "./BiasCheckVerdicts.js"

export { BacktestRobustness, Backtests, BiasChecks, BiasCheckVerdicts }

/**
 * Backtests as durable jobs: the service that queues them and this instance's workers that run
 * them, for as long as the layer lives, the purge of old finished ones, the robustness figures
 * of completed ones, and programs' bias checks (which queue backtests).
 */
export const BacktestsLive = Layer.mergeAll(
  BiasChecks.Default,
  BacktestRobustness.Default,
  BacktestWorkersLive,
  BacktestRetentionLive
).pipe(
  Layer.provideMerge(Backtests.Default),
  Layer.provideMerge(BacktestsRepo.Default)
)
