import { Layer } from "effect"
import { SignalEngineLive } from "./SignalEngineLive.js"
import { SignalEngineRepo } from "./SignalEngineRepo.js"
import { Signals } from "./Signals.js"
import { SignalsRepo } from "./SignalsRepo.js"
import { TriggerRetentionLive } from "./TriggerRetention.js"
import { WalletActivityLive } from "./WalletActivity.js"

export type { SignalEngineOptions } from "../config/PlatformConfig.js"
export { coveredFrom, maxHole, sampleSpans, type WindowCoverage, windowCoverage } from "./Coverage.js"
export { depthLevels, MarketSample } from "./MarketSample.js"
export {
  candleMetrics,
  conditionMet,
  evaluateCondition,
  evaluateMetric,
  levelMetrics,
  type MetricReading,
  metricValue,
  type WindowInputs,
  windowInputs,
  windowOf
} from "./Metrics.js"
export { SignalEngine, type SignalEngineShape } from "./SignalEngine.js"
export { evaluatePool, sampleRetention, SignalEngineLive } from "./SignalEngineLive.js"
export { SignalEngineRepo } from "./SignalEngineRepo.js"
export { Signals } from "./Signals.js"
export { SignalsRepo } from "./SignalsRepo.js"
export * from "./WalletActivity.js"
export { defaultSizeChangeThreshold, walletEvents } from "./WalletEvents.js"

/**
 * Signals and pools (the service) and this instance's signal engine (see `SignalEngine`), which
 * share their repositories; the engine runs for as long as the layer lives, and the purge of
 * old triggers.
 */
export const SignalsLive = Layer.mergeAll(Signals.Default, SignalEngineLive, TriggerRetentionLive).pipe(
  Layer.provideMerge(Layer.mergeAll(SignalsRepo.Default, SignalEngineRepo.Default, WalletActivityLive))
)
