import { Effect, JSONSchema, Schema, Stream } from "effect"
import { withRequestSpan } from "../http/RequestSpan.js"
import type { InsightResult } from "./Assistant.js"
import type { AssistantModel } from "./AssistantModel.js"
import type { InsightFacts } from "./InsightAnalysis.js"

const Line = Schema.String.pipe(Schema.maxLength(1000))
const Levels = Schema.Array(Schema.Finite).pipe(Schema.maxItems(10))

/** What the model must answer; its text is decoded through this, never used as it comes. */
export const ModelInsight = Schema.Struct({
  sentiment: Schema.Literal("bullish", "bearish", "neutral"),
  summary: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(4000)),
  key_levels: Schema.Struct({ support: Levels, resistance: Levels }),
  drivers: Schema.Array(Line).pipe(Schema.maxItems(20)),
  risks: Schema.Array(Line).pipe(Schema.maxItems(20)),
  sources: Schema.Array(Schema.Struct({ name: Line, detail: Line })).pipe(Schema.maxItems(20))
})

const instructions = [
  "You are the market analyst of a crypto trading platform. Read the facts (JSON) the user gives and answer",
  "with one JSON object and nothing else, matching this JSON Schema:",
  JSON.stringify(JSONSchema.make(ModelInsight)),
  "key_levels are support prices below the price and resistance prices above it; drivers and risks are short",
  "sentences; sources name the facts you used (market_data, klines, indicators, ranking, news) with what you took",
  "from each."
].join("\n")

/** The facts as the model reads them. */
const factsMessage = (facts: InsightFacts, prompt: string | null) =>
  JSON.stringify({
    symbol: facts.symbol,
    timeframe: facts.timeframe,
    at: facts.now.toISOString(),
    price: facts.price,
    change_24h_percent: facts.change_24h,
    funding_rate: facts.funding_rate,
    indicators: { sma_20: facts.sma_20, ema_20: facts.ema_20, rsi_14: facts.rsi_14 },
    candles: facts.candles.map((c) => [c.time, c.open, c.high, c.low, c.close, c.volume]),
    candle_columns: ["time", "open", "high", "low", "close", "volume"],
    ranking: facts.ranking
      ? { rank: facts.ranking.row.rank, of: facts.ranking.of, score: facts.ranking.row.score }
      : null,
    news: facts.news.map((n) => ({ title: n.title, summary: n.summary, published_at: n.published_at, link: n.link })),
    ...(prompt ? { question: prompt } : {})
  })

/**
 * Asks the model for the insight: the facts (and the owner's question, if any) in, one JSON object
 * out, decoded through `ModelInsight`. Fails with why the answer cannot be used: the model failed,
 * or what it said is not the object asked for.
 */
export const insightByModel = (
  model: AssistantModel["Type"],
  facts: InsightFacts,
  prompt: string | null
): Effect.Effect<InsightResult, string> =>
  model.turn([{ role: "system", content: instructions }, { role: "user", content: factsMessage(facts, prompt) }], [])
    .pipe(
      Stream.runFold("", (text, event) => (event._tag === "Text" ? text + event.text : text)),
      Effect.mapError((e) => e.message),
      // Models often wrap the object in prose or a code fence; only the outermost braces are read.
      Effect.flatMap((text) =>
        Schema.decodeUnknown(Schema.parseJson(ModelInsight))(text.slice(text.indexOf("{"), text.lastIndexOf("}") + 1))
          .pipe(Effect.mapError(() => "Its answer did not decode as an insight"))
      ),
      Effect.map((answer): InsightResult => ({
        symbol: facts.symbol,
        timeframe: facts.timeframe,
        ...answer,
        analyst: model.name,
        generated_at: facts.now.toISOString()
      })),
      withRequestSpan("Insights.byModel", { attributes: { model: model.name, symbol: facts.symbol } })
    )
