import { Tool, Toolkit } from "@effect/ai"
import { Effect, Schema } from "effect"
import { Account } from "../accounts/Account.js"
import { Accounts } from "../accounts/Accounts.js"
import { Backtest, BacktestId, BacktestRequest } from "../backtests/Backtest.js"
import { Backtests } from "../backtests/Backtests.js"
import { errorCatalogue } from "../http/Errors.js"
import { KlinesResponse, MarketDataQuery, MarketSymbol, PricesRequest, PricesResponse } from "../market/Market.js"
import { MarketData } from "../market/MarketData.js"
import { News } from "../news/News.js"
import { NewsList } from "../news/NewsSource.js"
import { ProgramId, ProgramList } from "../programs/Program.js"
import { Programs } from "../programs/Programs.js"
import { RankingTable } from "../ranking/Ranking.js"
import { Rankings } from "../ranking/Rankings.js"
import { Optimization, OptimizationId, OptimizationRequest } from "../research/Optimization.js"
import { Optimizations } from "../research/Optimizations.js"
import { PoolId, SignalsListing, TriggerList } from "../signals/Signal.js"
import { Signals } from "../signals/Signals.js"
import { CurrentUser, type CurrentUserShape } from "../users/Authentication.js"
import { Exchange, Timeframe } from "../venues/Venue.js"

/** What a tool answers when it cannot do what was asked; the model sees it and may try again. */
export const ToolFailure = Schema.Struct({ code: Schema.String, error: Schema.String })
export type ToolFailure = typeof ToolFailure.Type

const codeOf = new Map(errorCatalogue.map((row) => [row.name, row.code]))

/** A domain error (from the catalogue) as the tool's failure, so the model reads why. */
const asToolFailure = <A, E extends { readonly _tag: string; readonly error: string }, R>(
  self: Effect.Effect<A, E, R>
): Effect.Effect<A, ToolFailure, R> =>
  Effect.mapError(self, (e) => ({ code: codeOf.get(e._tag) ?? "internal_error", error: e.error }))

// Each tool is declared once: its parameters (which decode what the model sends), its result and failure.
const tool = <const Name extends string, P extends Schema.Struct.Fields, S extends Schema.Schema.Any>(
  name: Name,
  description: string,
  parameters: P,
  success: S
) =>
  Tool.make(name, {
    description,
    parameters,
    success,
    failure: ToolFailure,
    failureMode: "return",
    dependencies: [CurrentUser]
  })

const IndicatorValues = Schema.Struct({
  price: Schema.Number,
  change_24h: Schema.Number,
  sma_20: Schema.NullOr(Schema.Number),
  ema_20: Schema.NullOr(Schema.Number),
  rsi_14: Schema.NullOr(Schema.Number)
})

export const GetPrices = tool(
  "get_prices",
  "Latest price, 24h change, 24h volume, funding rate and open interest of symbols such as BTC or ETH.",
  PricesRequest.fields,
  PricesResponse
)
export const GetKlines = tool(
  "get_klines",
  "Recent closed candles (time, open, high, low, close, volume) of one symbol, oldest first.",
  {
    symbol: MarketSymbol,
    timeframe: Schema.optionalWith(Timeframe, { default: () => "1h" as const }),
    limit: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 200)), { default: () => 50 }),
    exchange: Schema.optionalWith(Exchange, { default: () => "venue1" as const, nullable: true })
  },
  KlinesResponse
)
export const GetIndicators = tool(
  "get_indicators",
  "SMA(20), EMA(20) and Wilder's RSI(14) of symbols, as programs' ta helpers compute them, with price and 24h change.",
  {
    symbols: MarketDataQuery.fields.symbols,
    exchange: MarketDataQuery.fields.exchange,
    timeframe: MarketDataQuery.fields.timeframe
  },
  Schema.Struct({
    timeframe: Timeframe,
    symbols: Schema.Record({ key: Schema.String, value: IndicatorValues }),
    errors: Schema.Record({ key: Schema.String, value: Schema.String })
  })
)
export const ListAccounts = tool(
  "list_accounts",
  "The caller's trading accounts with their cash and leverage settings.",
  {},
  Schema.Array(Account)
)
export const ListPrograms = tool(
  "list_programs",
  "The caller's trading programs (id, name, language, description).",
  {},
  ProgramList
)
export const StartBacktest = tool(
  "start_backtest",
  "Queue a backtest of one of the caller's programs; answers the queued backtest, whose id get_backtest reads.",
  { program_id: ProgramId, ...BacktestRequest.fields },
  Backtest
)
export const GetBacktest = tool(
  "get_backtest",
  "One of the caller's backtests: status, progress and, once completed, metrics and trades.",
  { backtest_id: BacktestId },
  Backtest
)
export const StartOptimization = tool(
  "start_optimization",
  "Queue a search of one of the caller's programs' declared parameters (grid, random or tpe over `space`, " +
    "maximising `objective`, optionally with walk_forward); answers the queued optimisation, whose id get_optimization reads.",
  { program_id: ProgramId, ...OptimizationRequest.fields },
  Optimization
)
export const GetOptimization = tool(
  "get_optimization",
  "One of the caller's optimisations: status, trials done, the best point so far and, once finished, its result (folds with walk-forward).",
  { program_id: ProgramId, optimization_id: OptimizationId },
  Optimization
)

export const GetRanking = tool(
  "get_ranking",
  "Symbols ranked by a score over every built-in factor (momentum, trend, volatility, volume, microstructure), best first.",
  {
    timeframe: Schema.optionalWith(Timeframe, { default: () => "1h" as const }),
    limit: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 50)), { default: () => 10 }),
    exchange: Schema.optionalWith(Exchange, { default: () => "venue1" as const, nullable: true })
  },
  RankingTable
)
export const ListSignals = tool(
  "list_signals",
  "The caller's signals and signal pools with their trigger conditions.",
  {},
  SignalsListing
)
export const GetTriggers = tool(
  "get_triggers",
  "Recent firings of the caller's signal pools, newest first; optionally of one pool or one symbol.",
  {
    pool_id: Schema.optional(PoolId),
    symbol: Schema.optional(MarketSymbol),
    limit: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 50)), { default: () => 20 })
  },
  TriggerList
)

export const GetNews = tool(
  "get_news",
  "Recent stories from the caller's enabled news feeds, newest first; optionally only those mentioning one symbol.",
  {
    symbol: Schema.optional(MarketSymbol),
    limit: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 20)), { default: () => 5 })
  },
  NewsList
)

/** Every tool the assistant may call. */
export const AssistantToolkit = Toolkit.make(
  GetPrices,
  GetKlines,
  GetIndicators,
  ListAccounts,
  ListPrograms,
  StartBacktest,
  GetBacktest,
  StartOptimization,
  GetOptimization,
  GetRanking,
  ListSignals,
  GetTriggers,
  GetNews
)
export type AssistantToolName = keyof typeof AssistantToolkit.tools

const caller = CurrentUser

/** The tools' handlers: each runs as the caller, through the same services (and ownership checks) as the API. */
export const AssistantToolsLive = AssistantToolkit.toLayer(
  Effect.gen(function*() {
    const market = yield* MarketData
    const accounts = yield* Accounts
    const programs = yield* Programs
    const backtests = yield* Backtests
    const optimizations = yield* Optimizations
    const rankings = yield* Rankings
    const signals = yield* Signals
    const news = yield* News
    return {
      get_prices: (params) => market.prices(params).pipe(asToolFailure),
      get_klines: (params) => Effect.flatMap(caller, (user) => market.klines(user, params)).pipe(asToolFailure),
      get_indicators: (params) =>
        // The candles are not answered; the indicators are read over a program's window whatever the limit.
        market.query({ ...params, limit: 1, indicators: ["sma", "ema", "rsi"] }).pipe(
          Effect.map((data) => ({
            timeframe: data.timeframe,
            errors: data.errors,
            symbols: Object.fromEntries(
              Object.entries(data.symbols).map(([symbol, s]) => [symbol, {
                price: s.price,
                change_24h: s.change_24h,
                sma_20: s.indicators["sma"] ?? null,
                ema_20: s.indicators["ema"] ?? null,
                rsi_14: s.indicators["rsi"] ?? null
              }])
            )
          })),
          asToolFailure
        ),
      list_accounts: () => Effect.flatMap(caller, (user) => accounts.list(user, { limit: 100, offset: 0 })),
      list_programs: () => Effect.flatMap(caller, (user) => programs.list(user, { limit: 100, offset: 0 })),
      start_backtest: ({ program_id, ...request }) =>
        Effect.flatMap(caller, (user) => backtests.submit(user, program_id, request)).pipe(asToolFailure),
      get_backtest: ({ backtest_id }) =>
        Effect.flatMap(caller, (user) => backtests.get(user, backtest_id)).pipe(asToolFailure),
      start_optimization: ({ program_id, ...request }) =>
        Effect.flatMap(caller, (user) => optimizations.submit(user, program_id, request)).pipe(asToolFailure),
      get_optimization: ({ optimization_id, program_id }) =>
        Effect.flatMap(caller, (user) => optimizations.get(user, program_id, optimization_id)).pipe(asToolFailure),
      get_ranking: (params) => rankings.table(params).pipe(asToolFailure),
      list_signals: () => Effect.flatMap(caller, (user) => signals.list(user)),
      get_triggers: (query) =>
        Effect.flatMap(caller, (user) => signals.triggers(user, { ...query, offset: 0 })).pipe(asToolFailure),
      get_news: ({ limit, symbol }) => Effect.flatMap(caller, (user) => news.list(user, { symbol, limit, offset: 0 }))
    }
  })
)

/** Whether what each tool needs is set up for the caller: a program to backtest, a pool whose triggers to read, an enabled feed. */
export const toolConfigured = (user: CurrentUserShape) =>
  Effect.gen(function*() {
    const programs = yield* Programs
    const signals = yield* Signals
    const hasPrograms = (yield* programs.list(user, { limit: 1, offset: 0 })).programs.length > 0
    const hasPools = (yield* signals.list(user)).pools.length > 0
    const hasFeeds = (yield* (yield* News).sources(user)).sources.some((s) => s.enabled)
    const configured: Record<AssistantToolName, boolean> = {
      get_prices: true,
      get_klines: true,
      get_indicators: true,
      list_accounts: true,
      list_programs: true,
      start_backtest: hasPrograms,
      get_backtest: true,
      start_optimization: hasPrograms,
      get_optimization: true,
      get_ranking: true,
      list_signals: true,
      get_triggers: hasPools,
      get_news: hasFeeds
    }
    return configured
  })
