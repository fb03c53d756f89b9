import { Layer } from "effect"
import { Optimizations } from "./Optimizations.js"
import { OptimizationsRepo } from "./OptimizationsRepo.js"
import { OptimizationWorkersLive } from "./OptimizationWorkers.js"
import { TrialWorkersLive } from "./TrialWorkers.js"

export { Optimizations }

/** Optimisations as durable jobs: the service, this instance's coordinators and trial workers, for as long as the layer lives. */
export const ResearchLive = Layer.mergeAll(OptimizationWorkersLive, TrialWorkersLive).pipe(
  Layer.provideMerge(Optimizations.Default),
  Layer.provideMerge(OptimizationsRepo.Default)
)
