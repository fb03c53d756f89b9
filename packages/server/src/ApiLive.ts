import { HttpApiBuilder } from "@effect/platform"
import * as SqlClient from "@effect/sql/SqlClient"
import {
  Accounts,
  AiBacktests,
  AiTraders,
  Analytics,
  Arena,
  AssistantChat,
  Authentication,
  BacktestRobustness,
  Backtests,
  BiasChecks,
  Bindings,
  CandleSyncs,
  Datasets,
  Insights,
  ManualOrders,
  MarketData,
  MarketIntelligence,
  News,
  OptimizationRobustness,
  Optimizations,
  Programs,
  Rankings,
  Reconciliation,
  RiskSettings,
  Signals,
  Storage,
  StorageStats,
  Trader,
  TradingApi,
  Users,
  VenueAccounts
} from "@trading-platform/core"
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
import { withOnlyServices } from "./http/GroupServices.js"
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
 * Gives its `RateLimits` too, so the fast lane counts against the same limits. Each group is built
 * with only the services its handlers use (`withOnlyServices`), since it carries them per request.
 */
export const ApiLive = HttpApiBuilder.api(TradingApi).pipe(
  Layer.provide([
    withOnlyServices(Authentication, Users)(UsersHttpLive),
    withOnlyServices(SqlClient.SqlClient, Storage)(HealthHttpLive),
    withOnlyServices(Authentication, Programs)(ProgramsHttpLive),
    withOnlyServices(Authentication, Backtests, BacktestRobustness)(BacktestsHttpLive),
    withOnlyServices(Authentication, Analytics)(AnalyticsHttpLive)
  ]),
  Layer.provide([
    withOnlyServices(Authentication, Accounts)(AccountsHttpLive),
    withOnlyServices(Authentication, MarketData, CandleSyncs, Datasets)(MarketHttpLive),
    withOnlyServices(Authentication, VenueAccounts)(VenueAccountsHttpLive),
    withOnlyServices(Authentication, Trader)(TraderHttpLive)
  ]),
  Layer.provide([
    withOnlyServices(Authentication, Bindings, ManualOrders, Reconciliation)(AutomationHttpLive),
    withOnlyServices(Authentication, Arena)(ArenaHttpLive),
    withOnlyServices(Authentication, StorageStats)(StorageStatsHttpLive)
  ]),
  Layer.provide(withOnlyServices(Authentication, BiasChecks)(BiasChecksHttpLive)),
  Layer.provide(withOnlyServices(Authentication, Optimizations, OptimizationRobustness)(OptimizationsHttpLive)),
  Layer.provide(withOnlyServices(Authentication, RiskSettings)(RiskHttpLive)),
  Layer.provide(withOnlyServices(Authentication, AiTraders, AiBacktests)(AiTradersHttpLive)),
  Layer.provide(
    withOnlyServices(Authentication, AssistantChat, Insights, Programs, Signals, News, StreamLeases)(AssistantHttpLive)
  ),
  Layer.provide(withOnlyServices(Authentication, News)(NewsHttpLive)),
  Layer.provide(withOnlyServices(Authentication, Rankings)(RankingHttpLive)),
  Layer.provide([withOnlyServices(Authentication, MarketIntelligence, StreamLeases)(StreamsHttpLive), WebSocketLive]),
  Layer.provide(withOnlyServices(Authentication, Signals)(SignalsHttpLive)),
  Layer.provide([AuthenticationLive, ApiMiddlewareLive]),
  Layer.provideMerge(RateLimits.Default),
  Layer.provide(StreamLeases.Default),
  Layer.provide(RateLimiterLive)
)
