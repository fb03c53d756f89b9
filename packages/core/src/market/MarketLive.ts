import { Layer } from "effect"
import { CandleSyncs, CandleSyncWorkersLive } from "./CandleSyncs.js"
import { CandleSyncsRepo } from "./CandleSyncsRepo.js"
import { Datasets } from "./Datasets.js"
import { MarketData } from "./MarketData.js"

export { CandleFileUnreadable, collectCandles, parseCandles } from "./CandleCsv.js"
export { CandleStore } from "./CandleStore.js"
export { CandleSyncs, maxSyncBars } from "./CandleSyncs.js"
export { Datasets, type ImportFile, maxImportBytes } from "./Datasets.js"
export { type CandleSource, MarketData } from "./MarketData.js"

/**
 * Market data from the venues through the candle store, the users' imported datasets, and the
 * candle sync jobs with this instance's workers.
 */
export const MarketLive = Layer.mergeAll(CandleSyncs.DefaultWithoutDependencies, CandleSyncWorkersLive).pipe(
  Layer.provide(CandleSyncsRepo.Default),
  Layer.provideMerge(Layer.mergeAll(MarketData.Default, Datasets.Default))
)
