import { Clock, Effect, Layer } from "effect"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { runJobWorkers } from "../jobs/JobWorkers.js"
import { MarketData } from "../market/MarketData.js"
import { News } from "../news/News.js"
import { Rankings } from "../ranking/Rankings.js"
import { analyse } from "./InsightAnalysis.js"
import { insightJobs, type InsightRow, InsightsRepo } from "./InsightsRepo.js"

/**
 * The insight workers of this instance (see `runJobWorkers`): each job gathers the market facts
 * of its symbol (price, candles, indicators, its rank on the factor table, the owner's recent news
 * about it) and writes the analyst's reading of them. A failure to read the market hands the job back for another attempt.
 */
export const InsightWorkersLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const { assistant } = yield* PlatformConfig
    const repo = yield* InsightsRepo
    const market = yield* MarketData
    const rankings = yield* Rankings
    const news = yield* News

    const run = (row: InsightRow) =>
      Effect.gen(function*() {
        const data = yield* market.query({
          symbols: [row.symbol],
          exchange: row.exchange,
          timeframe: row.timeframe,
          limit: 100,
          indicators: ["sma", "ema", "rsi"]
        })
        const facts = data.symbols[row.symbol]
        if (!facts) return yield* Effect.fail(new Error(data.errors[row.symbol] ?? `No market data for ${row.symbol}`))
        // The ranking is a supporting fact: an insight is still worth having without it.
        const table = yield* rankings.table({ timeframe: row.timeframe, exchange: row.exchange, limit: 500 }).pipe(
          Effect.option
        )
        const ranked = table._tag === "Some" ? table.value.rows.find((r) => r.symbol === row.symbol) : undefined
        const stories = yield* news.about(row.user_id, row.symbol, 3)
        return analyse({
          symbol: row.symbol,
          timeframe: row.timeframe,
          price: facts.price,
          change_24h: facts.change_24h,
          funding_rate: facts.funding_rate,
          sma_20: facts.indicators["sma"] ?? null,
          ema_20: facts.indicators["ema"] ?? null,
          rsi_14: facts.indicators["rsi"] ?? null,
          candles: facts.klines,
          ranking: ranked && table._tag === "Some" ? { row: ranked, of: table.value.rows.length } : undefined,
          news: stories,
          now: new Date(yield* Clock.currentTimeMillis)
        })
      })

    yield* runJobWorkers({ kind: insightJobs.table, queue: repo.jobs, options: assistant.insightJobs, run })
  })
)
