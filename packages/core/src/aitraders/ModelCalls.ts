import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Clock, Data, Effect, Option, Redacted, Schema } from "effect"
import { createHash } from "node:crypto"
import type { AccountRow } from "../accounts/Accounts.js"
import { defaultAiTraderOptions, PlatformConfig } from "../config/PlatformConfig.js"
import { makeGuardedFetch } from "../fetch/GuardedFetch.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { Secrets } from "../secrets/Secrets.js"
import { UserId } from "../users/User.js"
import { builtinModel } from "./AiTrader.js"
import {
  askOpenAiCompatible,
  builtinReply,
  type ChatMessage,
  chatParameters,
  isBuiltin,
  ModelCallFailed,
  type ModelReply,
  type SymbolFacts
} from "./TraderModel.js"

/** A call that may only be answered from the cache (a replay, or a backtest out of budget) whose prompt is not there. */
export class NotCached extends Data.TaggedError("NotCached")<{ readonly key: string }> {}

/** A model's answer, and whether it came from the cache (no call made, nothing spent). */
export interface CachedReply extends ModelReply {
  readonly cached: boolean
  /** The call's key (see `modelCallKey`). */
  readonly key: string
}

/** Which model answers: the endpoint's base URL (null for the built-in model) and the model's name. */
export interface ModelIdentity {
  readonly baseUrl: string | null
  readonly model: string
}

/** The account's model, as a call's key names it. */
export const modelIdentity = (account: Pick<AccountRow, "model" | "base_url">): ModelIdentity =>
  isBuiltin(account)
    ? { baseUrl: null, model: builtinModel }
    : { baseUrl: account.base_url?.replace(/\/$/, "") ?? null, model: account.model! }

/**
 * The content address of a model call: the SHA-256 of the model (base URL and name), the messages
 * and the call's parameters, as hex. The key, the only secret of a call, is not part of it.
 */
export const modelCallKey = (identity: ModelIdentity, messages: ReadonlyArray<ChatMessage>, parameters: unknown) =>
  createHash("sha256")
    .update(JSON.stringify({ base_url: identity.baseUrl, model: identity.model, messages, parameters }))
    .digest("hex")

const CachedAnswer = Schema.Struct({ answer: Schema.String, prompt_tokens: Schema.Int, completion_tokens: Schema.Int })

/**
 * Every call of an AI account's model, live rounds and backtests alike: content-addressed (see
 * `modelCallKey`) and answered from the owner's cache when the same call was made before, else
 * asked and its answer kept. A failed call (no answer) is not kept, so it is asked again.
 */
export class ModelCalls extends Effect.Service<ModelCalls>()("@trading-platform/core/ModelCalls", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* PlatformConfig
    const secrets = yield* Secrets
    const options = config.aiTraders ?? defaultAiTraderOptions
    const guarded = makeGuardedFetch(config.fetch)

    const find = SqlSchema.findOne({
      Request: Schema.Struct({ user_id: UserId, key: Schema.String }),
      Result: CachedAnswer,
      execute: ({ key, user_id }) =>
        sql`
        SELECT answer, prompt_tokens, completion_tokens FROM ai_model_calls WHERE user_id = ${user_id} AND key = ${key}`
    })

    const store = (row: {
      readonly user_id: number
      readonly key: string
      readonly identity: ModelIdentity
      readonly reply: ModelReply
      readonly now: Date
    }) =>
      sql`
        INSERT INTO ai_model_calls ${
        sql.insert({
          user_id: row.user_id,
          key: row.key,
          model: row.identity.model,
          base_url: row.identity.baseUrl,
          answer: row.reply.text,
          prompt_tokens: row.reply.promptTokens,
          completion_tokens: row.reply.completionTokens,
          created_at: row.now
        })
      }
        ON CONFLICT (user_id, key) DO NOTHING`.pipe(Effect.asVoid)

    /** Asks the account's own OpenAI-compatible endpoint; its key is opened for this call only, into the request's header. */
    const callEndpoint = (account: AccountRow, messages: ReadonlyArray<ChatMessage>) =>
      Effect.gen(function*() {
        if (account.base_url === null) {
          return yield* new ModelCallFailed({ code: "upstream_error", message: "The account has no base_url" })
        }
        const refused = guarded.literalRefusal(account.base_url)
        if (refused !== null) {
          return yield* new ModelCallFailed({
            code: "upstream_error",
            message: `The account's base_url is a ${refused} address, which the server does not call`
          })
        }
        const apiKey = account.api_key_sealed === null
          ? Option.none()
          : Option.some(Redacted.make(secrets.open(account.api_key_sealed, {
            table: "accounts",
            column: "api_key_sealed",
            row: String(account.id)
          })))
        return yield* askOpenAiCompatible(
          { baseUrl: account.base_url, model: account.model!, apiKey, timeout: options.timeout },
          messages
        )
      })

    /**
     * The account's model's answer to `messages`: from the owner's cache when the same call was
     * made before, else (unless `cacheOnly`, which fails with `NotCached`) asked and kept. The
     * built-in model reads `facts` rather than the prompts, so they are its parameters.
     */
    const ask = (
      account: AccountRow,
      messages: ReadonlyArray<ChatMessage>,
      facts: ReadonlyArray<SymbolFacts>,
      cacheOnly: boolean
    ) =>
      Effect.gen(function*() {
        const identity = modelIdentity(account)
        const builtin = isBuiltin(account)
        const key = modelCallKey(identity, messages, builtin ? { facts } : chatParameters)
        const hit = yield* find({ user_id: account.user_id, key })
        if (Option.isSome(hit)) {
          const { answer, completion_tokens, prompt_tokens } = hit.value
          return { text: answer, promptTokens: prompt_tokens, completionTokens: completion_tokens, cached: true, key }
        }
        if (cacheOnly) return yield* new NotCached({ key })
        const reply = builtin ? builtinReply(messages, facts) : yield* callEndpoint(account, messages)
        yield* store({
          user_id: account.user_id,
          key,
          identity,
          reply,
          now: new Date(yield* Clock.currentTimeMillis)
        })
        return { ...reply, cached: false, key } satisfies CachedReply
      }).pipe(withRequestSpan("ModelCalls.ask", { attributes: { accountId: account.id, cacheOnly } }))

    return { ask } as const
  })
}) {}
