import * as HttpApi from "@effect/platform/HttpApi"
import * as OpenApi from "@effect/platform/OpenApi"
import { AccountsApi } from "./accounts/AccountsApi.js"
import { AiTradersApi } from "./aitraders/AiTradersApi.js"
import { AnalyticsApi } from "./analytics/AnalyticsApi.js"
import { ArenaApi } from "./arena/ArenaApi.js"
import { AssistantApi } from "./assistant/AssistantApi.js"
import { AutomationApi } from "./automation/AutomationApi.js"
import { BacktestsApi } from "./backtests/BacktestsApi.js"
import { BiasChecksApi } from "./backtests/BiasChecksApi.js"
import { ApiError } from "./http/Errors.js"
import { MarketApi } from "./market/MarketApi.js"
import { NewsApi } from "./news/NewsApi.js"
import { ProgramsApi } from "./programs/ProgramsApi.js"
import { RankingApi } from "./ranking/RankingApi.js"
import { OptimizationsApi } from "./research/OptimizationsApi.js"
import { RiskApi } from "./risk/RiskApi.js"
import { SignalsApi } from "./signals/SignalsApi.js"
import { StreamsApi } from "./streams/StreamsApi.js"
import { HealthApi } from "./system/HealthApi.js"
import { StorageStatsApi } from "./system/StorageStatsApi.js"
import { TraderApi } from "./trader/TraderApi.js"
import { UsersApi } from "./users/UsersApi.js"
import { VenueAccountsApi } from "./venues/VenueAccountsApi.js"

/** The whole HTTP contract: every feature's group, under `/api`, with the errors any endpoint may answer. */
export class TradingApi extends HttpApi.make("trading-platform")
  .add(UsersApi)
  .add(HealthApi)
  .add(AccountsApi)
  .add(MarketApi)
  .add(VenueAccountsApi)
  .add(TraderApi)
  .add(ProgramsApi)
  .add(BacktestsApi)
  .add(BiasChecksApi)
  .add(OptimizationsApi)
  .add(AnalyticsApi)
  .add(AutomationApi)
  .add(RiskApi)
  .add(AiTradersApi)
  .add(ArenaApi)
  .add(StorageStatsApi)
  .add(AssistantApi)
  .add(NewsApi)
  .add(RankingApi)
  .add(StreamsApi)
  .add(SignalsApi)
  .addError(ApiError.InvalidInput)
  .addError(ApiError.NotFound)
  .addError(ApiError.MethodNotAllowed)
  .addError(ApiError.PayloadTooLarge)
  .addError(ApiError.UnsupportedMediaType)
  .addError(ApiError.RateLimited)
  .addError(ApiError.InternalError)
  .addError(ApiError.Unavailable)
  .prefix("/api")
  .annotate(OpenApi.Title, "Trading Platform API")
{}
