/**
 * The HTTP contract alone: schemas, errors, the API, the retry rule. Loads no storage, so clients
 * can import it (`@trading-platform/core/contract`; the client bundles it as
 * `@trading-platform/client/contract`).
 *
 * @module @trading-platform/core/contract
 */
export { TradingApi } from "./Api.js"

// What every endpoint shares.
export { describeIssues, parseErrorIssues, type RawIssue, summarizeIssues } from "./http/DecodeFailure.js"
export * from "./http/Errors.js"
export { Pagination } from "./http/Pagination.js"
export * from "./http/RateLimitPolicy.js"
export { CurrentRequestId, isValidRequestId } from "./http/RequestId.js"
export * from "./retry/RetrySchedule.js"
export { Authentication, CurrentUser, type CurrentUserShape } from "./users/Authentication.js"

// One contract file per feature (`<feature>/<Feature>Api.ts`): its endpoint group and schemas.
export * from "./accounts/AccountsApi.js"
export * from "./aitraders/AiTradersApi.js"
export * from "./analytics/AnalyticsApi.js"
export * from "./arena/ArenaApi.js"
export * from "./assistant/AssistantApi.js"
export * from "./automation/AutomationApi.js"
export * from "./backtests/BacktestsApi.js"
export * from "./backtests/BiasChecksApi.js"
export * from "./market/MarketApi.js"
export * from "./news/NewsApi.js"
export * from "./programs/ProgramsApi.js"
export * from "./ranking/RankingApi.js"
export * from "./research/OptimizationsApi.js"
export * from "./risk/RiskApi.js"
export * from "./signals/SignalsApi.js"
export * from "./streams/StreamsApi.js"
export * from "./system/HealthApi.js"
export * from "./system/StorageStatsApi.js"
export * from "./trader/TraderApi.js"
export * from "./users/UsersApi.js"
export * from "./venues/VenueAccountsApi.js"
