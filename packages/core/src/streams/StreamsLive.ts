import { Layer } from "effect"
import { BacktestProgressFeed } from "./BacktestProgressFeed.js"
import { MarketHub } from "./MarketHub.js"
import { MarketIntelligence } from "./MarketIntelligence.js"

export { progressInterval } from "../jobs/JobProgress.js"
export { BacktestProgressFeed } from "./BacktestProgressFeed.js"
export {
  heartbeatInterval,
  type HubUpdate,
  MailboxClosed,
  MailboxOverflow,
  MarketHub,
  type MarketMailbox,
  maxPendingEvents,
  priceInterval
} from "./MarketHub.js"
export { type MarketFeed, MarketIntelligence, replayLimit } from "./MarketIntelligence.js"

/** The live streams' services over one fan-out hub; needs the market data, the signal engine, news and the backtests. */
export const StreamsLive = Layer.mergeAll(MarketIntelligence.Default, BacktestProgressFeed.Default).pipe(
  Layer.provideMerge(MarketHub.Default)
)
