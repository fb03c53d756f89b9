import { hostTa } from "../indicators/TaSource.js"
import type { RankingRow } from "../ranking/Ranking.js"
import { toSignificant } from "../stats/Significant.js"
import type { Candle, Timeframe } from "../venues/Venue.js"
import type { InsightResult } from "./Assistant.js"
import { offlineAnalystName } from "./OfflineAnalyst.js"

/** The market facts an insight is drawn from. */
export interface InsightFacts {
  readonly symbol: string
  readonly timeframe: Timeframe
  readonly price: number
  readonly change_24h: number
  readonly funding_rate: number
  readonly sma_20: number | null
  readonly ema_20: number | null
  readonly rsi_14: number | null
  readonly candles: ReadonlyArray<Candle>
  /** The symbol's row of the ranking table, and how many rows it has; none when it is not ranked. */
  readonly ranking: { readonly row: RankingRow; readonly of: number } | undefined
  /** Recent stories about the symbol from the job owner's news sources. */
  readonly news: ReadonlyArray<
    {
      readonly title: string
      readonly link: string
      readonly summary: string | null
      readonly published_at: string | null
    }
  >
  readonly now: Date
}

const round = (n: number) => toSignificant(n, 6)

/**
 * The built-in analyst's reading of the facts, with fixed rules: each signal adds to or takes from
 * a score, and the score gives the sentiment. It gives no probability of a rise: the score is not
 * calibrated on history (the ranking and the news it reads have none to replay), so a number
 * would claim a precision it does not have. Deterministic: the same facts give the same insight.
 */
export const analyse = (facts: InsightFacts): InsightResult => {
  const drivers: Array<string> = []
  const risks: Array<string> = []
  let score = 0
  const { price, rsi_14: rsi, sma_20: sma, ema_20: ema } = facts
  if (sma !== null && ema !== null) {
    if (price > sma && price > ema) {
      score += 1
      drivers.push(
        `Price ${round(price)} is above SMA(20) ${round(sma)} and EMA(20) ${round(ema)}: short-term uptrend.`
      )
    } else if (price < sma && price < ema) {
      score -= 1
      drivers.push(
        `Price ${round(price)} is below SMA(20) ${round(sma)} and EMA(20) ${round(ema)}: short-term downtrend.`
      )
    } else drivers.push("Price is between its SMA(20) and EMA(20): no clear short-term trend.")
  }
  if (rsi !== null) {
    if (rsi >= 70) {
      score -= 0.5
      risks.push(`RSI(14) ${rsi.toFixed(1)} is overbought: a pullback is more likely than usual.`)
    } else if (rsi <= 30) {
      score += 0.5
      risks.push(`RSI(14) ${rsi.toFixed(1)} is oversold: selling may be exhausted, or the fall may go on.`)
    } else {
      score += (rsi - 50) / 40
      drivers.push(
        `RSI(14) ${rsi.toFixed(1)} is ${rsi >= 50 ? "above" : "below"} 50: momentum leans ${rsi >= 50 ? "up" : "down"}.`
      )
    }
  }
  if (Math.abs(facts.change_24h) >= 0.5) {
    score += Math.sign(facts.change_24h) * 0.5
    drivers.push(`${facts.change_24h >= 0 ? "Up" : "Down"} ${Math.abs(facts.change_24h).toFixed(2)}% over 24 hours.`)
  }
  if (Math.abs(facts.funding_rate) >= 0.0005) {
    risks.push(
      `Funding ${(facts.funding_rate * 100).toFixed(3)}% is high: ${
        facts.funding_rate > 0 ? "longs" : "shorts"
      } are crowded.`
    )
  }
  if (facts.ranking) {
    const { of, row } = facts.ranking
    const third = of / 3
    if (row.rank <= third) score += 0.5
    else if (row.rank > 2 * third) score -= 0.5
    drivers.push(`Ranks ${row.rank} of ${of} on the factor table (score ${row.score.toFixed(2)}).`)
  }

  if (facts.news.length > 0) {
    drivers.push(`In the news: ${facts.news.map((n) => `"${n.title}"`).join("; ")}.`)
  }

  const bars = facts.candles
  const recent = bars.slice(-24)
  const lows = [Math.min(...recent.map((b) => b.low)), Math.min(...bars.map((b) => b.low))]
  const highs = [Math.max(...recent.map((b) => b.high)), Math.max(...bars.map((b) => b.high))]
  const support = [...new Set(lows.filter((l) => Number.isFinite(l) && l < price).map(round))].sort((a, b) => b - a)
  const resistance = [...new Set(highs.filter((h) => Number.isFinite(h) && h > price).map(round))].sort((a, b) => a - b)
  // The standard deviation of the bar-to-bar returns over all the candles, as `ta.volatility` computes it.
  const move = bars.length >= 2 ? hostTa.volatility(bars, bars.length - 1) : null
  if (typeof move === "number") {
    risks.push(`Typical move per ${facts.timeframe} bar is ${move.toFixed(2)}%; size positions for it.`)
  }

  const sentiment = score >= 0.75 ? "bullish" : score <= -0.75 ? "bearish" : "neutral"
  const summary = `Built-in analyst: ${facts.symbol} on ${facts.timeframe} looks ${sentiment} ` +
    `at ${round(price)}. ${drivers[0] ?? ""}`.trim()
  return {
    symbol: facts.symbol,
    timeframe: facts.timeframe,
    sentiment,
    summary,
    key_levels: { support, resistance },
    drivers,
    risks,
    sources: [
      { name: "market_data", detail: `price, 24h change and funding of ${facts.symbol}` },
      { name: "klines", detail: `${bars.length} ${facts.timeframe} candles` },
      { name: "indicators", detail: "SMA(20), EMA(20), Wilder's RSI(14): the ta helpers over the last 500 bars" },
      ...(facts.ranking ? [{ name: "ranking", detail: `rank ${facts.ranking.row.rank} of ${facts.ranking.of}` }] : []),
      ...facts.news.map((n) => ({ name: "news", detail: `${n.title} (${n.link})` }))
    ],
    analyst: offlineAnalystName,
    generated_at: facts.now.toISOString()
  }
}
