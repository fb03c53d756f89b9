import { Layer } from "effect"
import { BacktestProgressFeed } from "./BacktestProgressFeed.js"
import { MarketHub } from "./MarketHub.js"
import { MarketIntelligence } from "./MarketIntelligence.js"

/** The live streams' services over one fan-out hub; needs the market data, the signal engine and the backtests. */
export const StreamsLive = Layer.mergeAll(MarketIntelligence.Default, BacktestProgressFeed.Default).pipe(
  Layer.provideMerge(MarketHub.Default)
)
