import { Layer } from "effect"
import { Backtests } from "./Backtests.js"
import { BacktestsRepo } from "./BacktestsRepo.js"
import { BacktestWorkersLive } from "./BacktestWorkers.js"

export { Backtests }

/**
 * Backtests as durable jobs: the service that queues them and this instance's workers that run
 * them, for as long as the layer lives.
 */
export const BacktestsLive = Layer.mergeAll(Backtests.Default, BacktestWorkersLive).pipe(
  Layer.provideMerge(BacktestsRepo.Default)
)
