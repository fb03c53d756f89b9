import { FetchHttpClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Clock, Data, Duration, Effect, Option, Redacted, Schema } from "effect"
import type { ModelPrice } from "../config/PlatformConfig.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { isRetryableStatus, parseRetryAfter, retrySchedule } from "../retry/RetrySchedule.js"
import { toSignificant } from "../stats/Significant.js"
import { builtinModel, ModelAnswer, type ModelDecision } from "./AiTrader.js"

/** One message of the chat the model is sent (the OpenAI chat shape that compatible servers share). */
export interface ChatMessage {
  readonly role: "system" | "user"
  readonly content: string
}

/** What a model answered: its text, untrusted, and the tokens it reported (or, for the built-in model, counted). */
export interface ModelReply {
  readonly text: string
  readonly promptTokens: number
  readonly completionTokens: number
}

/** The model gave no answer; `code` is the catalogue's, `message` is stored on the round. */
export class ModelCallFailed extends Data.TaggedError("ModelCallFailed")<{
  readonly code: "upstream_error" | "upstream_timeout" | "rate_limited"
  readonly message: string
}> {}

/** An account's own OpenAI-compatible endpoint; the key is opened just for the call and never leaves it. */
export interface ModelEndpoint {
  readonly baseUrl: string
  readonly model: string
  readonly apiKey: Option.Option<Redacted.Redacted>
  readonly timeout: Duration.Duration
}

/** What the built-in model reads of each symbol (what the prompt shows the model too). */
export interface SymbolFacts {
  readonly symbol: string
  readonly price: number | null
  readonly sma_20: number | null
  readonly ema_20: number | null
  readonly rsi_14: number | null
  readonly atr_14: number | null
  readonly position: { readonly side: "long" | "short"; readonly size: number } | null
}

/** Whether an account's `model` is the built-in one. */
export const isBuiltin = (account: { readonly model: string | null }) =>
  account.model === null || account.model.trim() === "" || account.model === builtinModel

/** The parameters of every call to an OpenAI-compatible model besides its messages (part of a call's cache key). */
export const chatParameters = { temperature: 0, response_format: { type: "json_object" } } as const

// A rough count for the built-in model, so its rounds use the same limits: about four characters a token.
export const countTokens = (text: string) => Math.ceil(text.length / 4)

const round = (n: number) => toSignificant(n, 6)

/**
 * The built-in model: deterministic trend and momentum rules, as the offline analyst reads a
 * market (price against SMA(20) and EMA(20), RSI(14)). Flat in an uptrend that is not overbought,
 * it buys a fifth of the balance with a stop two ATRs away and a take profit three away; in a
 * downtrend that is not oversold it sells short the same way; a position against the trend is
 * closed; anything else holds. Every decision says why.
 */
export const builtinDecisions = (facts: ReadonlyArray<SymbolFacts>): ModelAnswer => ({
  decisions: facts.map((f): ModelDecision => {
    const { atr_14: atr, ema_20: ema, price, rsi_14: rsi, sma_20: sma } = f
    if (price === null || sma === null || ema === null) {
      return { operation: "hold", symbol: f.symbol, reason: "Not enough candles to read a trend: holding." }
    }
    const trend = price > sma && price > ema ? "up" : price < sma && price < ema ? "down" : "flat"
    const seen = `Price ${round(price)} against SMA(20) ${round(sma)} and EMA(20) ${round(ema)}` +
      (rsi === null ? "" : `, RSI(14) ${rsi.toFixed(1)}`) + `: ${trend === "flat" ? "no clear" : trend} trend`
    if (f.position !== null) {
      const against = (f.position.side === "long" && trend === "down") ||
        (f.position.side === "short" && trend === "up")
      return against
        ? {
          operation: "close",
          symbol: f.symbol,
          reason: `${seen}; the ${f.position.side} position is against it: closing.`
        }
        : { operation: "hold", symbol: f.symbol, reason: `${seen}; keeping the ${f.position.side} position.` }
    }
    const stop = atr === null ? undefined : 2 * atr
    const target = atr === null ? undefined : 3 * atr
    if (trend === "up" && (rsi === null || rsi < 70)) {
      return {
        operation: "buy",
        symbol: f.symbol,
        target_portion_of_balance: 0.2,
        leverage: 1,
        ...(stop !== undefined && price - stop > 0 ? { stop_loss_price: round(price - stop) } : {}),
        ...(target !== undefined ? { take_profit_price: round(price + target) } : {}),
        reason: `${seen}, not overbought: buying a fifth of the balance.`
      }
    }
    if (trend === "down" && (rsi === null || rsi > 30)) {
      return {
        operation: "sell",
        symbol: f.symbol,
        target_portion_of_balance: 0.2,
        leverage: 1,
        ...(stop !== undefined ? { stop_loss_price: round(price + stop) } : {}),
        ...(target !== undefined && price - target > 0 ? { take_profit_price: round(price - target) } : {}),
        reason: `${seen}, not oversold: selling short a fifth of the balance.`
      }
    }
    return {
      operation: "hold",
      symbol: f.symbol,
      reason: `${seen}${rsi !== null && (rsi >= 70 || rsi <= 30) ? ", stretched" : ""}: holding.`
    }
  })
})

const decodeModelAnswer = Schema.decodeUnknownEither(Schema.parseJson(ModelAnswer), { onExcessProperty: "error" })

/** A model's answer read through the strict decision schema: its decisions, or (null) why it is not the decision JSON. */
export const decodeAnswer = (
  text: string
): { readonly decisions: ReadonlyArray<ModelDecision> | null; readonly error: string | null } => {
  const decoded = decodeModelAnswer(text)
  return decoded._tag === "Right"
    ? { decisions: decoded.right.decisions, error: null }
    : {
      decisions: null,
      error: `invalid_answer: the answer is not the decision JSON (${
        String(decoded.left.message).split("\n").slice(0, 6).join(" ").slice(0, 500)
      })`
    }
}

/** A call's cost: `(prompt × price.prompt + completion × price.completion) / 1 000 000` at the model's prices, 0 for one not listed. */
export const modelCost = (
  prices: Readonly<Record<string, ModelPrice>>,
  model: string,
  promptTokens: number,
  completionTokens: number
) => {
  const price = prices[model]
  return price === undefined ? 0 : (promptTokens * price.prompt + completionTokens * price.completion) / 1_000_000
}

/** The built-in model's reply: its decisions as JSON, with tokens counted as a model would report them. */
export const builtinReply = (messages: ReadonlyArray<ChatMessage>, facts: ReadonlyArray<SymbolFacts>): ModelReply => {
  const text = JSON.stringify(builtinDecisions(facts))
  return {
    text,
    promptTokens: countTokens(messages.map((m) => m.content).join("\n")),
    completionTokens: countTokens(text)
  }
}

// The non-streamed `POST /chat/completions` answer: only what we read.
const Completion = Schema.Struct({
  choices: Schema.Array(Schema.Struct({
    message: Schema.Struct({ content: Schema.optional(Schema.NullOr(Schema.String)) })
  })),
  usage: Schema.optional(Schema.NullOr(Schema.Struct({ prompt_tokens: Schema.Int, completion_tokens: Schema.Int })))
})

/** A failed attempt, before retrying: 429 and 5xx may be retried (after `Retry-After` when sent). */
class AttemptFailed extends Data.TaggedError("AttemptFailed")<{
  readonly status: number
  readonly retryAfter: Option.Option<Duration.Duration>
}> {}

const failed = (code: ModelCallFailed["code"], message: string) => new ModelCallFailed({ code, message })

/**
 * Asks an OpenAI-compatible model (its `POST /chat/completions`, not streamed, JSON asked for) and
 * answers its text and token usage. A 429 or 5xx is tried again (three attempts in all), waiting
 * at least its `Retry-After`; each attempt has the endpoint's timeout.
 */
export const askOpenAiCompatible = (endpoint: ModelEndpoint, messages: ReadonlyArray<ChatMessage>) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const request = HttpClientRequest.post(`${endpoint.baseUrl.replace(/\/$/, "")}/chat/completions`).pipe(
      HttpClientRequest.bodyUnsafeJson({
        model: endpoint.model,
        messages,
        ...chatParameters
      }),
      Option.match(endpoint.apiKey, {
        onNone: () => (r: HttpClientRequest.HttpClientRequest) => r,
        onSome: (key) => HttpClientRequest.bearerToken(Redacted.value(key))
      })
    )
    const attempt = Effect.gen(function*() {
      const response = yield* client.execute(request)
      if (response.status < 200 || response.status >= 300) {
        return yield* new AttemptFailed({
          status: response.status,
          retryAfter: parseRetryAfter(response.headers["retry-after"], yield* Clock.currentTimeMillis)
        })
      }
      return yield* response.json
    }).pipe(
      Effect.scoped,
      Effect.timeoutFail({
        duration: endpoint.timeout,
        onTimeout: () =>
          failed("upstream_timeout", `The model did not answer within ${Duration.format(endpoint.timeout)}`)
      })
    )
    const body = yield* attempt.pipe(
      Effect.retry(retrySchedule(
        (e: AttemptFailed | ModelCallFailed | { readonly _tag: string }) =>
          e._tag === "AttemptFailed"
            ? { retryable: isRetryableStatus((e as AttemptFailed).status), retryAfter: (e as AttemptFailed).retryAfter }
            : { retryable: false, retryAfter: Option.none() },
        { maxAttempts: 3 }
      )),
      Effect.catchAll((e) =>
        e._tag === "ModelCallFailed"
          ? Effect.fail(e as ModelCallFailed)
          : e._tag === "AttemptFailed"
          ? Effect.fail(
            (e as AttemptFailed).status === 429
              ? failed("rate_limited", "The model's provider is rate limiting (429); no trade this round")
              : failed("upstream_error", `The model's provider answered ${(e as AttemptFailed).status}`)
          )
          : Effect.fail(failed("upstream_error", "The model's provider could not be reached or sent no JSON"))
      )
    )
    const completion = yield* Schema.decodeUnknown(Completion)(body).pipe(
      Effect.mapError(() => failed("upstream_error", "The model's provider answered in an unknown shape"))
    )
    return {
      text: completion.choices[0]?.message.content ?? "",
      promptTokens: completion.usage?.prompt_tokens ?? 0,
      completionTokens: completion.usage?.completion_tokens ?? 0
    } satisfies ModelReply
  }).pipe(
    Effect.provide(FetchHttpClient.layer),
    withRequestSpan("TraderModel.askOpenAiCompatible", { attributes: { model: endpoint.model } })
  )
