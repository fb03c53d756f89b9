import { Clock, Effect, Layer, Stream } from "effect"
import { AssistantModel, ModelEvent, type ModelMessage } from "./AssistantModel.js"
import type { AssistantToolName } from "./AssistantTools.js"

/** The analyst's name, shown to users and stored with its replies. */
export const offlineAnalystName = "built-in analyst"

export const offlineAnalystIntro =
  "I'm the built-in analyst: no language model is configured, so this answer comes from the platform's own data and fixed rules."

// Capitalised words that are not coins.
const notSymbols = new Set([
  "I",
  "AI",
  "RSI",
  "SMA",
  "EMA",
  "USD",
  "USDT",
  "PNL",
  "OK",
  "API",
  "ID",
  "TA",
  "ATR",
  "MACD",
  "A",
  "IS",
  "THE"
])
const timeframes = ["1m", "5m", "15m", "30m", "1h", "4h", "1d"] as const
const day = 24 * 60 * 60 * 1000

/** The context line the chat service puts in the system message, if any. */
const contextOf = (messages: ReadonlyArray<ModelMessage>): Record<string, unknown> => {
  for (const m of messages) {
    if (m.role !== "system") continue
    const line = m.content.split("\n").find((l) => l.startsWith("Context: "))
    if (!line) continue
    try {
      const parsed: unknown = JSON.parse(line.slice("Context: ".length))
      if (parsed !== null && typeof parsed === "object") return parsed as Record<string, unknown>
    } catch {
      // A context that is not JSON is ignored.
    }
  }
  return {}
}

interface PlannedCall {
  readonly name: AssistantToolName
  readonly args: Record<string, unknown>
}

/** Which tools answer the question: fixed rules on its words, symbols and ids. */
export const plan = (question: string, context: Record<string, unknown>, now: number): ReadonlyArray<PlannedCall> => {
  const words = question.toLowerCase()
  const fromText = [...question.matchAll(/\$?\b([A-Z][A-Z0-9]{1,9})\b/g)].map((m) => m[1]!).filter((s) =>
    !notSymbols.has(s)
  )
  const fromContext = [context["symbol"], ...(Array.isArray(context["symbols"]) ? context["symbols"] : [])]
    .filter((s): s is string => typeof s === "string")
    .map((s) => s.toUpperCase())
  const symbols = [...new Set([...fromText, ...fromContext])].slice(0, 10)
  const timeframe = timeframes.find((tf) => new RegExp(`\\b${tf}\\b`).test(words)) ??
    timeframes.find((tf) => tf === context["timeframe"]) ?? "1h"

  const calls: Array<PlannedCall> = []
  if (/\b(accounts?|balances?|cash)\b/.test(words)) calls.push({ name: "list_accounts", args: {} })
  if (/\b(programs?|strateg(y|ies))\b/.test(words) && !/backtest/.test(words)) {
    calls.push({ name: "list_programs", args: {} })
  }
  const backtestId = /backtest\s*#?(\d+)/.exec(words)
  const programId = /program\s*#?(\d+)/.exec(words)
  if (backtestId) calls.push({ name: "get_backtest", args: { backtest_id: Number(backtestId[1]) } })
  else if (/backtest/.test(words) && programId) {
    calls.push({
      name: "start_backtest",
      args: {
        program_id: Number(programId[1]),
        symbol: symbols[0] ?? "BTC",
        timeframe,
        start: new Date(now - 30 * day).toISOString(),
        end: new Date(now).toISOString()
      }
    })
  } else if (/backtest/.test(words)) calls.push({ name: "list_programs", args: {} })
  if (/\b(rank(ing|ed)?|best|top|strongest|weakest)\b/.test(words)) {
    calls.push({ name: "get_ranking", args: { timeframe, limit: 5 } })
  }
  if (/\b(signals?|pools?)\b/.test(words)) calls.push({ name: "list_signals", args: {} })
  if (/\b(triggers?|triggered|fired|alerts?)\b/.test(words)) {
    calls.push({ name: "get_triggers", args: symbols[0] ? { symbol: symbols[0], limit: 10 } : { limit: 10 } })
  }
  if (/\b(news|headlines?|stories)\b/.test(words)) {
    calls.push({ name: "get_news", args: symbols[0] ? { symbol: symbols[0] } : {} })
  }
  if (/\b(candles?|klines?|chart)\b/.test(words) && symbols[0]) {
    calls.push({ name: "get_klines", args: { symbol: symbols[0], timeframe, limit: 24 } })
  }
  // Every market question, and any question nothing else answers, gets the indicators.
  if (symbols.length > 0 || calls.length === 0) {
    calls.push({ name: "get_indicators", args: { symbols: symbols.length > 0 ? symbols : ["BTC", "ETH"], timeframe } })
  }
  return calls
}

const num = (n: number, digits = 2) =>
  n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: 0 })
const pct = (n: number) => `${n >= 0 ? "+" : ""}${n.toFixed(2)}%`

const readIndicators = (result: any): Array<string> => {
  const lines: Array<string> = []
  for (const [symbol, s] of Object.entries<any>(result.symbols ?? {})) {
    const parts = [`${symbol} (${result.timeframe}): ${num(s.price, 4)}, ${pct(s.change_24h)} over 24h.`]
    if (s.rsi_14 !== null) {
      const mood = s.rsi_14 >= 70 ? "overbought" : s.rsi_14 <= 30 ? "oversold" : "neutral"
      parts.push(`RSI(14) ${s.rsi_14.toFixed(1)}, ${mood}.`)
    }
    if (s.sma_20 !== null && s.ema_20 !== null) {
      const above = [s.sma_20, s.ema_20].filter((v: number) => s.price > v).length
      const trend = above === 2 ? "up" : above === 0 ? "down" : "mixed"
      parts.push(
        `Price is ${above === 2 ? "above" : above === 0 ? "below" : "between"} SMA(20) ${
          num(s.sma_20, 4)
        } and EMA(20) ${num(s.ema_20, 4)}: short-term trend ${trend}.`
      )
    }
    lines.push(parts.join(" "))
  }
  for (const [symbol, error] of Object.entries<string>(result.errors ?? {})) lines.push(`${symbol}: ${error}.`)
  return lines
}

const readers: Record<AssistantToolName, (result: any) => Array<string>> = {
  get_indicators: readIndicators,
  get_prices: (r) =>
    Object.entries<any>(r.prices ?? {}).map(([s, p]) =>
      `${s}: ${num(p.price, 4)}, ${pct(p.change_24h)} over 24h, funding ${p.funding_rate}.`
    ),
  get_klines: (r) => {
    const bars: Array<any> = r.klines ?? []
    if (bars.length === 0) return [`No ${r.timeframe} candles for ${r.symbol}.`]
    const first = bars[0].open
    const last = bars[bars.length - 1].close
    const high = Math.max(...bars.map((b) => b.high))
    const low = Math.min(...bars.map((b) => b.low))
    return [
      `Last ${bars.length} ${r.timeframe} candles of ${r.symbol}: from ${num(first, 4)} to ${num(last, 4)} (${
        pct(((last - first) / first) * 100)
      }), high ${num(high, 4)}, low ${num(low, 4)}.`
    ]
  },
  list_accounts: (r: Array<any>) =>
    r.length === 0
      ? ["You have no trading accounts yet (POST /api/account creates one)."]
      : [
        `You have ${r.length} account(s): ${
          r.map((a) => `#${a.id} ${a.name} (cash ${num(a.current_cash)})`).join("; ")
        }.`
      ],
  list_programs: (r) =>
    r.programs.length === 0
      ? ["You have no programs yet (POST /api/programs creates one)."]
      : [`Your programs: ${
        r.programs.map((p: any) => `#${p.id} ${p.name}`).join("; ")
      }. Ask "backtest program N on BTC" to test one.`],
  get_ranking: (r) =>
    r.rows.length === 0
      ? ["The ranking has no rows yet."]
      : [`Top of the ${r.timeframe} ranking: ${
        r.rows.map((row: any) => `#${row.rank} ${row.symbol} (score ${row.score.toFixed(2)})`).join(", ")
      }.`],
  list_signals: (r) =>
    r.signals.length === 0 && r.pools.length === 0
      ? ["You have no signals or pools yet (POST /api/signals creates one)."]
      : [`You have ${r.signals.length} signal(s) (${
        r.signals.map((x: any) => x.signal_name).join(", ")
      }) and ${r.pools.length} pool(s) (${r.pools.map((x: any) => x.pool_name).join(", ")}).`],
  get_triggers: (r) =>
    r.triggers.length === 0
      ? ["None of your pools has fired yet."]
      : [`Latest firings: ${r.triggers.map((t: any) => `${t.pool_name} on ${t.symbol} at ${t.fired_at}`).join("; ")}.`],
  get_news: (r) =>
    r.items.length === 0
      ? [
        "No stories from your enabled news sources yet (GET /api/news/sources lists them; enable one, then POST /api/news/refresh)."
      ]
      : [`Latest stories: ${
        r.items.map((i: any) => `"${i.title}"${i.symbols.length > 0 ? ` (${i.symbols.join(", ")})` : ""}`).join("; ")
      }.`],
  start_backtest: (
    r
  ) => [`Queued backtest #${r.id} on ${r.symbol} ${r.timeframe}; ask about "backtest ${r.id}" for its result.`],
  start_optimization: (r) => [
    `Queued optimisation #${r.id} of program #${r.program_id}: ${r.trials_total} trials (${r.request.search} search).`
  ],
  get_optimization: (r) =>
    r.result?.best
      ? [
        `Optimisation #${r.id} ${r.status} after ${r.trials_done} trials: best ${
          JSON.stringify(r.result.best.params)
        } ` +
        `with objective ${num(r.result.best.objective)}, PnL ${pct(r.result.best.metrics.total_pnl_percent)}.`
      ]
      : [
        `Optimisation #${r.id} is ${r.status}${
          r.error ? `: ${r.error}` : ""
        } (${r.trials_done}/${r.trials_total} trials).`
      ],
  get_backtest: (r) =>
    r.metrics
      ? [
        `Backtest #${r.id} (${r.symbol} ${r.timeframe}) ${r.status}: PnL ${num(r.metrics.total_pnl)} (${
          pct(r.metrics.total_pnl_percent)
        }), ${r.metrics.total_trades} trades, win rate ${(r.metrics.win_rate * 100).toFixed(0)}%, max drawdown ${
          r.metrics.max_drawdown_percent.toFixed(2)
        }%.`
      ]
      : [
        `Backtest #${r.id} is ${r.status}${r.error ? `: ${r.error}` : ""} (progress ${Math.round(r.progress * 100)}%).`
      ]
}

/** The answer from the tools' results, one paragraph per tool. */
export const compose = (results: ReadonlyArray<{ readonly name: string; readonly content: string }>): string => {
  const lines = [offlineAnalystIntro]
  for (const { content, name } of results) {
    let result: any
    try {
      result = JSON.parse(content)
    } catch {
      continue
    }
    if (result !== null && typeof result === "object" && "code" in result && "error" in result) {
      lines.push(`${name} failed: ${result.error}.`)
      continue
    }
    const read = readers[name as AssistantToolName]
    if (read) lines.push(...read(result))
  }
  lines.push("This is information, not financial advice.")
  return lines.join("\n\n")
}

/**
 * The built-in offline analyst, the default model: it plans tool calls from the question with
 * fixed rules, then writes its answer from their results. Needs no network and no key.
 */
export const OfflineAnalyst = Layer.succeed(
  AssistantModel,
  AssistantModel.of({
    name: offlineAnalystName,
    turn: (messages) =>
      Stream.unwrap(Effect.gen(function*() {
        let lastUser = messages.length - 1
        while (lastUser >= 0 && messages[lastUser]!.role !== "user") lastUser--
        const after = messages.slice(lastUser + 1)
        const toolResults = after.flatMap((m) => m.role === "tool" ? [{ name: m.name, content: m.content }] : [])
        if (after.length === 0) {
          const question = lastUser >= 0 ? messages[lastUser]!.content : ""
          const calls = plan(question, contextOf(messages), yield* Clock.currentTimeMillis)
          const events: ReadonlyArray<ModelEvent> = calls.map((c, i) =>
            ModelEvent.ToolCall({ id: `analyst_${i}`, name: c.name, arguments: JSON.stringify(c.args) })
          )
          return Stream.fromIterable(events)
        }
        // Streamed a paragraph at a time, like a model would.
        const events: ReadonlyArray<ModelEvent> = compose(toolResults).split(/(?<=\n\n)/).map((text) =>
          ModelEvent.Text({ text })
        )
        return Stream.fromIterable(events)
      }))
  })
)
