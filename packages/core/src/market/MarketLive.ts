import { MarketData } from "./MarketData.js"

export { MarketData }

/** Market data from the venues, cached. */
export const MarketLive = MarketData.Default
