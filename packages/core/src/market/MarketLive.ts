import { Layer } from "effect"
import { Datasets } from "./Datasets.js"
import { MarketData } from "./MarketData.js"

export { CandleFileUnreadable, collectCandles, parseCandles } from "./CandleCsv.js"
export { CandleStore } from "./CandleStore.js"
export { Datasets, type ImportFile, maxImportBytes } from "./Datasets.js"
export { type CandleSource, MarketData } from "./MarketData.js"

/** Market data from the venues through the candle store, and the users' imported datasets. */
export const MarketLive = Layer.mergeAll(MarketData.Default, Datasets.Default)
