import { HttpApiBuilder } from "@effect/platform"
import { TradingApi } from "@trading-platform/core"
import { Layer } from "effect"
import { AccountsHttpLive } from "./accounts/AccountsHttp.js"
import { AiTradersHttpLive } from "./aitraders/AiTradersHttp.js"
import { AnalyticsHttpLive } from "./analytics/AnalyticsHttp.js"
import { ArenaHttpLive } from "./arena/ArenaHttp.js"
import { AssistantHttpLive } from "./assistant/AssistantHttp.js"
import { AutomationHttpLive } from "./automation/AutomationHttp.js"
import { BacktestsHttpLive } from "./backtests/BacktestsHttp.js"
import { BiasChecksHttpLive } from "./backtests/BiasChecksHttp.js"
import { ApiMiddlewareLive } from "./http/ApiMiddleware.js"
import { AuthenticationLive } from "./http/AuthenticationLive.js"
import { RateLimiterLive, RateLimits } from "./http/RateLimits.js"
import { MarketHttpLive } from "./market/MarketHttp.js"
import { NewsHttpLive } from "./news/NewsHttp.js"
import { ProgramsHttpLive } from "./programs/ProgramsHttp.js"
import { RankingHttpLive } from "./ranking/RankingHttp.js"
import { OptimizationsHttpLive } from "./research/OptimizationsHttp.js"
import { RiskHttpLive } from "./risk/RiskHttp.js"
import { SignalsHttpLive } from "./signals/SignalsHttp.js"
import { StreamLeases } from "./streams/StreamLeases.js"
import { StreamsHttpLive } from "./streams/StreamsHttp.js"
import { WebSocketLive } from "./streams/WebSocketRoute.js"
import { HealthHttpLive } from "./system/HealthHttp.js"
import { StorageStatsHttpLive } from "./system/StorageStatsHttp.js"
import { TraderHttpLive } from "./trader/TraderHttp.js"
import { UsersHttpLive } from "./users/UsersHttp.js"
import { VenueAccountsHttpLive } from "./venues/VenueAccountsHttp.js"

/**
 * The whole API implemented on the platform's services: handlers, authentication, rate limits
 * and the error envelope. Needs the services of `PlatformLive` (so any of them can be swapped).
 * Gives its `RateLimits` too, so the fast lane counts against the same limits.
 */
export const ApiLive = HttpApiBuilder.api(TradingApi).pipe(
  Layer.provide([UsersHttpLive, HealthHttpLive, ProgramsHttpLive, BacktestsHttpLive, AnalyticsHttpLive]),
  Layer.provide([AccountsHttpLive, MarketHttpLive, VenueAccountsHttpLive, TraderHttpLive]),
  Layer.provide([AutomationHttpLive, ArenaHttpLive, StorageStatsHttpLive]),
  Layer.provide(BiasChecksHttpLive),
  Layer.provide(OptimizationsHttpLive),
  Layer.provide(RiskHttpLive),
  Layer.provide(AiTradersHttpLive),
  Layer.provide(AssistantHttpLive),
  Layer.provide(NewsHttpLive),
  Layer.provide(RankingHttpLive),
  Layer.provide([StreamsHttpLive, WebSocketLive]),
  Layer.provide(SignalsHttpLive),
  Layer.provide([AuthenticationLive, ApiMiddlewareLive]),
  Layer.provideMerge(RateLimits.Default),
  Layer.provide(StreamLeases.Default),
  Layer.provide(RateLimiterLive)
)
