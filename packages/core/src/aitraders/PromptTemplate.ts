import { Schema } from "effect"
import { Timeframe } from "../venues/Venue.js"

/** One variable a prompt may name, as `GET /api/ai/prompt-variables` lists it. */
export const PromptVariable = Schema.Struct({
  /** As written in a template, e.g. `{positions}` or `{candles:SYMBOL:TIMEFRAME:COUNT}`. */
  name: Schema.String,
  description: Schema.String,
  example: Schema.String
})
export type PromptVariable = typeof PromptVariable.Type

/** The most candles one `{candles:…}` variable shows. */
export const maxTemplateCandles = 200

/** Every variable a template may name; what each becomes is JSON (or text for `{time}` and `{symbols}`). */
export const promptVariables: ReadonlyArray<PromptVariable> = [
  {
    name: "{context}",
    description: "everything below as one JSON object (what the default user template sends)",
    example: "{context}"
  },
  { name: "{time}", description: "the round's time, ISO 8601 UTC", example: "{time}" },
  { name: "{symbols}", description: "the account's symbols, comma-separated", example: "{symbols}" },
  {
    name: "{account}",
    description: "the account: id, name, cash, margin in use, default and max leverage (JSON)",
    example: "{account}"
  },
  {
    name: "{positions}",
    description: "its open positions: symbol, side, size, entry price, leverage, take profit, stop loss (JSON)",
    example: "{positions}"
  },
  { name: "{orders}", description: "its last 10 orders (JSON)", example: "{orders}" },
  {
    name: "{market}",
    description:
      "for each of its symbols: price, 24 h change, funding rate, SMA(20), EMA(20), RSI(14), ATR(14) and the position (JSON)",
    example: "{market}"
  },
  {
    name: "{ranking}",
    description:
      "the factor ranking of the account's venue: the 5 best-ranked symbols and the account's own, each rank, symbol and score (JSON)",
    example: "{ranking}"
  },
  {
    name: "{triggers}",
    description:
      "the last 10 triggers of your signal pools on its symbols: pool, symbol, time and each signal's value (JSON)",
    example: "{triggers}"
  },
  {
    name: "{news}",
    description: "the latest stories (up to 3 per symbol) about its symbols from your enabled news sources (JSON)",
    example: "{news}"
  },
  {
    name: "{candles:SYMBOL:TIMEFRAME:COUNT}",
    description:
      `the last COUNT (1–${maxTemplateCandles}) closed candles of a symbol the account's venue lists, oldest first, ` +
      "each [time, open, high, low, close, volume] (JSON)",
    example: "{candles:BTC:1h:50}"
  }
]

const simpleNames = new Set([
  "context",
  "time",
  "symbols",
  "account",
  "positions",
  "orders",
  "market",
  "ranking",
  "triggers",
  "news"
])

/** A variable named in a template. */
export type TemplateVariable =
  | { readonly _tag: "Simple"; readonly name: string }
  | { readonly _tag: "Candles"; readonly symbol: string; readonly timeframe: Timeframe; readonly count: number }

// Only `{word}` or `{word:…}` is a variable: braces around anything else (JSON in the prompt) are text.
const variablePattern = /\{([a-z_]+(?::[^{}\s"]*)?)\}/g
const isTimeframe = Schema.is(Timeframe)

/** The variables a template names, or why one of them is not a variable it may name. */
export const parseTemplate = (
  text: string
): { readonly variables: ReadonlyArray<TemplateVariable>; readonly errors: ReadonlyArray<string> } => {
  const variables: Array<TemplateVariable> = []
  const errors: Array<string> = []
  for (const match of text.matchAll(variablePattern)) {
    const [name, ...args] = match[1]!.split(":")
    if (args.length === 0 && simpleNames.has(name!)) {
      variables.push({ _tag: "Simple", name: name! })
    } else if (name === "candles") {
      const [symbol, timeframe, count] = args
      const n = Number(count)
      if (args.length !== 3 || !/^[A-Za-z0-9]{1,20}$/.test(symbol ?? "")) {
        errors.push(`${match[0]}: write {candles:SYMBOL:TIMEFRAME:COUNT}, e.g. {candles:BTC:1h:50}`)
      } else if (!isTimeframe(timeframe)) {
        errors.push(`${match[0]}: the timeframe must be one of 1m, 5m, 15m, 30m, 1h, 4h, 1d`)
      } else if (!Number.isInteger(n) || n < 1 || n > maxTemplateCandles) {
        errors.push(`${match[0]}: the count must be a whole number from 1 to ${maxTemplateCandles}`)
      } else {
        variables.push({ _tag: "Candles", symbol: symbol!.toUpperCase(), timeframe, count: n })
      }
    } else {
      errors.push(`${match[0]} is not a variable (GET /api/ai/prompt-variables lists them)`)
    }
  }
  return { variables, errors }
}

/** The template with each variable replaced by `value` of it (unknown ones are left as written). */
export const renderTemplate = (text: string, value: (variable: TemplateVariable) => string | undefined) =>
  text.replace(variablePattern, (whole) => {
    const parsed = parseTemplate(whole).variables[0]
    return parsed === undefined ? whole : value(parsed) ?? whole
  })

/** The key of a `{candles:…}` variable, to fetch each one once. */
export const candlesKey = (v: Extract<TemplateVariable, { _tag: "Candles" }>) => `${v.symbol}:${v.timeframe}:${v.count}`

/** The default system prompt: what the model is, what it sees and the one answer it may give. */
export const defaultSystemPrompt = [
  "You are a trading model that manages one account on a crypto perpetual futures venue.",
  "You get the account's balance, its open positions, its recent orders, and for each of its symbols",
  "the latest price, recent candles (oldest first: [time, open, high, low, close, volume]) and",
  "indicators (SMA(20), EMA(20), RSI(14), ATR(14)).",
  "Answer with one JSON object and nothing else:",
  "{\"decisions\": [{\"operation\": \"buy\" | \"sell\" | \"hold\" | \"close\", \"symbol\": string,",
  "\"target_portion_of_balance\": number in (0, 1] or null, \"leverage\": whole number or null,",
  "\"entry_price\": limit price or null, \"take_profit_price\": number or null,",
  "\"stop_loss_price\": number or null, \"reason\": string}]}",
  "At most one decision per symbol, only for the account's symbols. `buy` opens or adds long, `sell` opens",
  "or adds short, `close` closes the position, `hold` does nothing. An entry_price makes the order a limit",
  "that fills now or never. Any other field, or any answer that is not this JSON, means no trade."
].join("\n")

/** The user message when an account sets none. */
export const defaultUserTemplate = "Context: {context}"

/** What `GET /api/ai/prompt-variables` answers. */
export class PromptVariables extends Schema.Class<PromptVariables>("PromptVariables")({
  variables: Schema.Array(PromptVariable),
  default_system_prompt: Schema.String,
  default_user_template: Schema.String
}) {}
