import { Schema } from "effect"

// Every error carries a message safe to show to end users and, once encoded, the request id.
const base = { error: Schema.String, request_id: Schema.optional(Schema.String) }

export const Issue = Schema.Struct({ path: Schema.String, message: Schema.String })
export type Issue = typeof Issue.Type

export const UnauthorizedReason = Schema.Literal(
  "token_missing",
  "token_invalid",
  "token_expired",
  "token_revoked",
  "invalid_credentials"
)
export type UnauthorizedReason = typeof UnauthorizedReason.Type

/**
 * An error of the API, declared once: a `Schema.TaggedError` with the message and request id
 * every error has and its own diagnostic `fields`, and, as statics, its HTTP `status` and what it
 * means. Its wire `code` is the tag in snake_case (`NotFound` → `not_found`); `Errors.ts` derives
 * the wire schemas and the catalogue from the classes of this module. Adding an error is adding a
 * class here and its row in `docs/errors.md`.
 */
const apiError = <Self>() =>
<const Tag extends string, Fields extends Schema.Struct.Fields = {}>(
  tag: Tag,
  status: number,
  description: string,
  fields?: Fields
) =>
  Object.assign(Schema.TaggedError<Self>()(tag, { ...base, ...fields } as typeof base & Fields), {
    status,
    description
  })

export class InvalidInput
  extends apiError<InvalidInput>()("InvalidInput", 400, "Missing field, wrong type or malformed JSON", {
    issues: Schema.Array(Issue)
  })
{}
export class Unauthorized extends apiError<Unauthorized>()(
  "Unauthorized",
  401,
  "Token missing, invalid, expired or revoked; or wrong credentials",
  {
    reason: UnauthorizedReason
  }
) {}
export class Forbidden
  extends apiError<Forbidden>()("Forbidden", 403, "Valid token, but the resource belongs to another user")
{}
export class NotFound extends apiError<NotFound>()("NotFound", 404, "Wrong or deleted id, or unknown route") {}
export class MethodNotAllowed extends apiError<MethodNotAllowed>()(
  "MethodNotAllowed",
  405,
  "The path exists but not with this method; `Allow` lists its methods"
) {}
export class Conflict
  extends apiError<Conflict>()("Conflict", 409, "Duplicate resource, or state changed since read")
{}
export class PayloadTooLarge extends apiError<PayloadTooLarge>()("PayloadTooLarge", 413, "Request body over 1 MiB") {}
export class UnsupportedMediaType
  extends apiError<UnsupportedMediaType>()("UnsupportedMediaType", 415, "A request body that is not application/json")
{}
export class LeverageTooHigh
  extends apiError<LeverageTooHigh>()("LeverageTooHigh", 422, "Leverage outside 1 <= default <= max <= venue cap")
{}
export class ProgramInvalid
  extends apiError<ProgramInvalid>()("ProgramInvalid", 422, "Program does not compile or lacks decide()", {
    line: Schema.optional(Schema.Int),
    column: Schema.optional(Schema.Int)
  })
{}
export class UnsupportedLanguage
  extends apiError<UnsupportedLanguage>()("UnsupportedLanguage", 422, "Program language is not supported")
{}
export class VenueRejected
  extends apiError<VenueRejected>()("VenueRejected", 422, "The venue refused the credentials")
{}
export class NoFactorHistory
  extends apiError<NoFactorHistory>()("NoFactorHistory", 422, "The factor is sampled now and has no history to measure")
{}
export class SignalInUse
  extends apiError<SignalInUse>()("SignalInUse", 409, "The signal is part of a pool; remove it from the pools first", {
    pool_ids: Schema.Array(Schema.Int)
  })
{}
export class ExchangeMismatch extends apiError<ExchangeMismatch>()(
  "ExchangeMismatch",
  422,
  "A pool's signals (or wallet tracking) are not on the pool's exchange"
) {}
export class SymbolNotListed
  extends apiError<SymbolNotListed>()("SymbolNotListed", 422, "A symbol is not listed on the venue", {
    symbols: Schema.Array(Schema.String)
  })
{}
export class NoMarketData extends apiError<NoMarketData>()(
  "NoMarketData",
  422,
  "The backtest's range holds no candles (it starts in the future)",
  {
    /** The last candle close the venue has, as ISO-8601; nothing after it exists yet. */
    available_until: Schema.String
  }
) {}
export class RiskBlocked extends apiError<RiskBlocked>()(
  "RiskBlocked",
  422,
  "The account's risk firewall refused the order: a limit or its mode (`rule` says which); the order is recorded as rejected",
  {
    /** The limit (`max_leverage`, `max_position_notional`, …) or `mode` (reduce_only, paused, flatten). */
    rule: Schema.String,
    /** The rejected order, as the account's orders list it. */
    order_id: Schema.optional(Schema.Int)
  }
) {}
export class OrderRejected extends apiError<OrderRejected>()(
  "OrderRejected",
  422,
  "The order broke a rule of the rulebook (lot, minimum, free cash, reduce-only) or the venue refused it; it is recorded as rejected",
  {
    /** The rejected order, as the account's orders list it. */
    order_id: Schema.optional(Schema.Int)
  }
) {}
export class BiasCheckRequired extends apiError<BiasCheckRequired>()(
  "BiasCheckRequired",
  422,
  "A binding on a venue that is not simulated needs a passed bias check of the program's current code (REQUIRE_BIAS_CHECK)",
  {
    program_id: Schema.Int
  }
) {}
export class RateLimited
  extends apiError<RateLimited>()("RateLimited", 429, "Request quota exceeded; wait retry_after seconds", {
    retry_after: Schema.Int
  })
{}
export class InternalError extends apiError<InternalError>()("InternalError", 500, "Unexpected failure") {}
export class UpstreamError extends apiError<UpstreamError>()(
  "UpstreamError",
  502,
  "The venue or provider cannot be reached or answered with a failure"
) {}
export class Unavailable extends apiError<Unavailable>()("Unavailable", 503, "Storage or a dependency is unavailable", {
  /** Whole seconds to wait, when the dependency said (a venue's `Retry-After`); also in `Retry-After`. */
  retry_after: Schema.optional(Schema.Int)
}) {}
export class UpstreamTimeout
  extends apiError<UpstreamTimeout>()("UpstreamTimeout", 504, "The venue or provider did not answer in time")
{}
