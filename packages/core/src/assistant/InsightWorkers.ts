import { Clock, Effect, Layer } from "effect"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { type JobLease, runJobWorkers } from "../jobs/JobWorkers.js"
import { MarketData } from "../market/MarketData.js"
import { News } from "../news/News.js"
import { Rankings } from "../ranking/Rankings.js"
import { AssistantModel } from "./AssistantModel.js"
import { analyse, type InsightFacts } from "./InsightAnalysis.js"
import { insightByModel } from "./InsightByModel.js"
import { insightJobs, type InsightRow, InsightsRepo } from "./InsightsRepo.js"
import { offlineAnalystName } from "./OfflineAnalyst.js"

/**
 * The market facts of an insight on a symbol: its price, candles and indicators from market data
 * (the `ta` helpers, as programs and the ranking compute them), its row of the ranking table, and
 * the owner's recent news about it. Fails when the market cannot be read.
 */
export const gatherFacts = (job: Pick<InsightRow, "user_id" | "symbol" | "exchange" | "timeframe">) =>
  Effect.gen(function*() {
    const market = yield* MarketData
    const rankings = yield* Rankings
    const news = yield* News
    const data = yield* market.query({
      symbols: [job.symbol],
      exchange: job.exchange,
      timeframe: job.timeframe,
      limit: 100,
      indicators: ["sma", "ema", "rsi"]
    })
    const quote = data.symbols[job.symbol]
    if (!quote) return yield* Effect.fail(new Error(data.errors[job.symbol] ?? `No market data for ${job.symbol}`))
    // The ranking is a supporting fact: an insight is still worth having without it.
    const table = yield* rankings.table({ timeframe: job.timeframe, exchange: job.exchange, limit: 500 }).pipe(
      Effect.option
    )
    const ranked = table._tag === "Some" ? table.value.rows.find((r) => r.symbol === job.symbol) : undefined
    const stories = yield* news.about(job.user_id, job.symbol, 3)
    const facts: InsightFacts = {
      symbol: job.symbol,
      timeframe: job.timeframe,
      price: quote.price,
      change_24h: quote.change_24h,
      funding_rate: quote.funding_rate,
      sma_20: quote.indicators["sma"] ?? null,
      ema_20: quote.indicators["ema"] ?? null,
      rsi_14: quote.indicators["rsi"] ?? null,
      candles: quote.klines,
      ranking: ranked && table._tag === "Some" ? { row: ranked, of: table.value.rows.length } : undefined,
      news: stories,
      now: new Date(yield* Clock.currentTimeMillis)
    }
    return facts
  })

/**
 * The insight workers of this instance (see `runJobWorkers`): each job gathers the market facts
 * of its symbol (price, candles, indicators, its rank on the factor table, the owner's recent news
 * about it) and writes a reading of them: the configured language model's, decoded through the
 * insight's schema, else (no model, or it failed or answered something else) the built-in analyst's.
 * A failure to read the market hands the job back for another attempt.
 */
export const InsightWorkersLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const { assistant } = yield* PlatformConfig
    const repo = yield* InsightsRepo
    const services = yield* Effect.context<MarketData | Rankings | News>()
    const model = yield* AssistantModel

    /** The built-in analyst's reading, saying why the model's was not used. */
    const fallback = (facts: InsightFacts, reason: string) => {
      const reading = analyse(facts)
      const detail = `${model.name}: ${reason}. The built-in analyst's rules answered instead.`
      return { ...reading, sources: [...reading.sources, { name: "fallback", detail }] }
    }

    const run = (row: InsightRow, lease: JobLease) =>
      Effect.gen(function*() {
        const facts = yield* Effect.provide(gatherFacts(row), services)
        if (model.name === offlineAnalystName) return analyse(facts)
        // The model may take longer than a lease: the claim is renewed while it answers.
        return yield* insightByModel(model, facts, row.prompt).pipe(
          Effect.catchAll((reason) =>
            Effect.as(
              Effect.logWarning(`insight ${row.id}: ${reason}; the built-in analyst answers`),
              fallback(facts, reason)
            )
          ),
          lease.keepAlive
        )
      })

    yield* runJobWorkers({ kind: insightJobs.table, queue: repo.jobs, options: assistant.insightJobs, run })
  })
)
