import { Effect } from "effect"
import { hostTa } from "../indicators/TaSource.js"
import type { Candle, Exchange, Timeframe } from "../venues/Venue.js"
import type { AiTraderSettings } from "./AiTrader.js"
import {
  candlesKey,
  defaultSystemPrompt,
  defaultUserTemplate,
  parseTemplate,
  renderTemplate
} from "./PromptTemplate.js"
import type { ChatMessage, SymbolFacts } from "./TraderModel.js"

/** Candles of each symbol the indicators are read over (the last 20 of them are shown). */
export const contextCandles = 50

/** The account as its model is shown it: what `{account}`, `{positions}` and `{orders}` hold. */
export interface AccountContext {
  readonly account: {
    readonly id: number
    readonly name: string
    readonly cash: number
    readonly margin_in_use: number
    readonly max_leverage: number | null
    readonly default_leverage: number | null
  }
  readonly positions: ReadonlyArray<{
    readonly symbol: string
    readonly side: "long" | "short"
    readonly size: number
    readonly entry_price: number
    readonly leverage: number
    readonly take_profit_price: number | null
    readonly stop_loss_price: number | null
  }>
  readonly recent_orders: ReadonlyArray<{
    readonly symbol: string
    readonly side: string
    readonly quantity: number
    readonly price: number | null
    readonly status: string
    readonly created_at: string
  }>
}

/** One symbol of the account's as its model is shown it. */
export interface SymbolContext {
  readonly symbol: string
  /** The latest price (the last close when there is no ticker). */
  readonly price: number | null
  readonly change_24h: number | null
  readonly funding_rate: number | null
  /** The last `contextCandles` closed candles, oldest first. */
  readonly candles: ReadonlyArray<Candle>
}

/** A symbol of the factor ranking as the model is shown it: the venue's best, and the account's own. */
export interface RankingContext {
  readonly rank: number
  readonly symbol: string
  readonly score: number
}

/** A recent trigger of one of the owner's signal pools on one of the account's symbols. */
export interface TriggerContext {
  readonly pool_name: string
  readonly symbol: string
  readonly fired_at: string
  readonly values: ReadonlyArray<{ readonly signal_name: string; readonly value: number | null }>
}

/** A news story as the model is shown it. */
export interface NewsContext {
  readonly symbols: ReadonlyArray<string>
  readonly title: string
  readonly published_at: string | null
}

const finite = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : null)

/**
 * The messages an AI account's model is sent at `time` (its own prompts, or the defaults, with
 * their variables filled in) and the facts the built-in model reads, from what was gathered: live
 * (a round) or as of a past bar (a backtest). `candles` answers a template's `{candles:…}`
 * variables, closed candles up to `time`.
 */
export const buildPrompt = <E, R>(input: {
  readonly settings: Pick<AiTraderSettings, "symbols" | "timeframe" | "system_prompt" | "user_template">
  readonly time: Date
  readonly exchange: Exchange
  readonly account: AccountContext
  readonly symbols: ReadonlyArray<SymbolContext>
  readonly ranking: ReadonlyArray<RankingContext>
  readonly triggers: ReadonlyArray<TriggerContext>
  readonly news: ReadonlyArray<NewsContext>
  readonly candles: (symbol: string, timeframe: Timeframe, count: number) => Effect.Effect<ReadonlyArray<Candle>, E, R>
}) =>
  Effect.gen(function*() {
    const { account, settings } = input
    const symbols = input.symbols.map((s) => {
      const held = account.positions.find((p) => p.symbol === s.symbol)
      const facts: SymbolFacts = {
        symbol: s.symbol,
        price: s.price,
        sma_20: finite(hostTa.sma(s.candles, 20)),
        ema_20: finite(hostTa.ema(s.candles, 20)),
        rsi_14: finite(hostTa.rsi(s.candles, 14)),
        atr_14: finite(hostTa.atr(s.candles, 14)),
        position: held === undefined ? null : { side: held.side, size: held.size }
      }
      return {
        facts,
        shown: {
          ...facts,
          change_24h: s.change_24h,
          funding_rate: s.funding_rate,
          candles: s.candles.slice(-20).map((c) => [c.time, c.open, c.high, c.low, c.close, c.volume])
        }
      }
    })
    const context = {
      time: input.time.toISOString(),
      exchange: input.exchange,
      timeframe: settings.timeframe,
      account: account.account,
      positions: account.positions,
      recent_orders: account.recent_orders,
      symbols: symbols.map((s) => s.shown),
      ranking: input.ranking,
      triggers: input.triggers,
      news: input.news
    }
    const templates = [settings.system_prompt ?? defaultSystemPrompt, settings.user_template ?? defaultUserTemplate]
    const candles = new Map<string, string>()
    for (const text of templates) {
      for (const v of parseTemplate(text).variables) {
        if (v._tag !== "Candles" || candles.has(candlesKey(v))) continue
        const bars = yield* input.candles(v.symbol, v.timeframe, v.count)
        candles.set(candlesKey(v), JSON.stringify(bars.map((c) => [c.time, c.open, c.high, c.low, c.close, c.volume])))
      }
    }
    const parts: Record<string, string> = {
      context: JSON.stringify(context),
      time: context.time,
      symbols: settings.symbols.join(", "),
      account: JSON.stringify(context.account),
      positions: JSON.stringify(context.positions),
      orders: JSON.stringify(context.recent_orders),
      market: JSON.stringify(symbols.map((s) => s.facts)),
      ranking: JSON.stringify(context.ranking),
      triggers: JSON.stringify(context.triggers),
      news: JSON.stringify(context.news)
    }
    const render = (text: string) =>
      renderTemplate(text, (v) => (v._tag === "Simple" ? parts[v.name] : candles.get(candlesKey(v))))
    const messages: ReadonlyArray<ChatMessage> = [
      { role: "system", content: render(templates[0]!) },
      { role: "user", content: render(templates[1]!) }
    ]
    return { messages, facts: symbols.map((s) => s.facts) }
  })

/** The prompt as a round keeps it: each message after a `[role]` line. */
export const promptText = (messages: ReadonlyArray<ChatMessage>) =>
  messages.map((m) => `[${m.role}]\n${m.content}`).join("\n\n")
