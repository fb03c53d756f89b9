import { Layer } from "effect"
import { OptimizationRobustness } from "./OptimizationRobustness.js"
import { Optimizations } from "./Optimizations.js"
import { OptimizationsRepo } from "./OptimizationsRepo.js"
import { OptimizationWorkersLive } from "./OptimizationWorkers.js"
import { TrialWorkersLive } from "./TrialWorkers.js"

export { OptimizationRobustness, Optimizations }

/**
 * Optimisations as durable jobs: the service, this instance's coordinators and trial workers, for
 * as long as the layer lives, and the robustness of finished ones.
 */
export const ResearchLive = Layer.mergeAll(OptimizationWorkersLive, TrialWorkersLive, OptimizationRobustness.Default)
  .pipe(
    Layer.provideMerge(Optimizations.Default),
    Layer.provideMerge(OptimizationsRepo.Default)
  )
