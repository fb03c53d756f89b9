import { Layer } from "effect"
import { AccountsLive } from "./accounts/AccountsLive.js"
import { AiTradersLive } from "./aitraders/AiTradersLive.js"
import { AnalyticsLive } from "./analytics/AnalyticsLive.js"
import { ArenaLive } from "./arena/ArenaLive.js"
import { AssistantLive } from "./assistant/AssistantLive.js"
import { AutomationLive } from "./automation/AutomationLive.js"
import { RiskLive } from "./automation/RiskLive.js"
import { BacktestsLive } from "./backtests/BacktestsLive.js"
import { JobsLive } from "./jobs/JobsLive.js"
import { MarketLive } from "./market/MarketLive.js"
import { NewsLive } from "./news/NewsLive.js"
import { ProgramsLive } from "./programs/ProgramsLive.js"
import { RankingLive } from "./ranking/RankingLive.js"
import { ResearchLive } from "./research/ResearchLive.js"
import { SandboxLive } from "./sandbox/SandboxLive.js"
import { SignalsLive } from "./signals/SignalsLive.js"
import { DatabaseLive } from "./sql/Database.js"
import { StreamsLive } from "./streams/StreamsLive.js"
import { StorageStatsLive } from "./system/StorageStatsLive.js"
import { TraderLive } from "./trader/TraderLive.js"
import { UsersLive } from "./users/UsersLive.js"
import { VenueAccountsLive } from "./venues/VenueAccountsLive.js"
import { VenuesLive } from "./venues/VenuesLive.js"

/**
 * The platform's services on the configured storage, with this instance's background work (the
 * job workers) running for as long as the layer lives; needs `PlatformConfig`. One `<Feature>Live`
 * per line: the features first, then, below them, what they use (each may use those below it).
 */
export const PlatformLive = Layer.mergeAll(
  UsersLive,
  TraderLive,
  AnalyticsLive,
  ResearchLive,
  ArenaLive,
  StorageStatsLive,
  RiskLive
).pipe(
  // Optimisations check their requests as backtests do.
  Layer.provideMerge(BacktestsLive),
  // AI traders place their decisions through automation's order path, and read the ranking and the owner's news.
  Layer.provideMerge(AiTradersLive),
  Layer.provideMerge(RankingLive),
  Layer.provideMerge(NewsLive),
  Layer.provideMerge(AutomationLive),
  // The ranking and automation read the signal engine (open interest samples, triggers).
  Layer.provideMerge(SignalsLive),
  // The live streams use the features above (market data, signals, backtests).
  (features) => StreamsLive.pipe(Layer.provideMerge(features)),
  // The assistant's tools use every feature above.
  (features) => AssistantLive.pipe(Layer.provideMerge(features)),
  Layer.provideMerge(ProgramsLive),
  // Backtests, automation, the ranking, the signal engine and the assistant read candles here.
  Layer.provideMerge(MarketLive),
  // Automation places orders with the accounts' venue credentials.
  Layer.provideMerge(VenueAccountsLive),
  Layer.provideMerge(AccountsLive),
  Layer.provideMerge(VenuesLive),
  Layer.provideMerge(SandboxLive),
  Layer.provideMerge(JobsLive),
  Layer.provideMerge(DatabaseLive)
)
