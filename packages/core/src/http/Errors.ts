import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Effect, FiberRef, ParseResult, Schema } from "effect"
import { CurrentRequestId } from "./RequestId.js"

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

export class InvalidInput extends Schema.TaggedError<InvalidInput>()("InvalidInput", {
  ...base,
  issues: Schema.Array(Issue)
}) {}
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", {
  ...base,
  reason: UnauthorizedReason
}) {}
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", base) {}
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", base) {}
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", base) {}
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", base) {}
export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()("UnsupportedMediaType", base) {}
export class LeverageTooHigh extends Schema.TaggedError<LeverageTooHigh>()("LeverageTooHigh", base) {}
export class ProgramInvalid extends Schema.TaggedError<ProgramInvalid>()("ProgramInvalid", {
  ...base,
  line: Schema.optional(Schema.Int),
  column: Schema.optional(Schema.Int)
}) {}
export class UnsupportedLanguage extends Schema.TaggedError<UnsupportedLanguage>()("UnsupportedLanguage", base) {}
export class VenueRejected extends Schema.TaggedError<VenueRejected>()("VenueRejected", base) {}
export class NoFactorHistory extends Schema.TaggedError<NoFactorHistory>()("NoFactorHistory", base) {}
export class SignalInUse extends Schema.TaggedError<SignalInUse>()("SignalInUse", {
  ...base,
  pool_ids: Schema.Array(Schema.Int)
}) {}
export class ExchangeMismatch extends Schema.TaggedError<ExchangeMismatch>()("ExchangeMismatch", base) {}
export class SymbolNotListed extends Schema.TaggedError<SymbolNotListed>()("SymbolNotListed", {
  ...base,
  symbols: Schema.Array(Schema.String)
}) {}
export class NoMarketData extends Schema.TaggedError<NoMarketData>()("NoMarketData", {
  ...base,
  /** The last candle close the venue has, as ISO-8601; nothing after it exists yet. */
  available_until: Schema.String
}) {}
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  ...base,
  retry_after: Schema.Int
}) {}
export class InternalError extends Schema.TaggedError<InternalError>()("InternalError", base) {}
export class UpstreamError extends Schema.TaggedError<UpstreamError>()("UpstreamError", base) {}
export class Unavailable extends Schema.TaggedError<Unavailable>()("Unavailable", base) {}
export class UpstreamTimeout extends Schema.TaggedError<UpstreamTimeout>()("UpstreamTimeout", base) {}

interface ErrorClass<A> extends Schema.Schema<A, any, never> {
  new(props: any): A
  readonly fields: Schema.Struct.Fields
}

/** The wire body of every error: `{ error, code, request_id }` plus the error's own diagnostic fields. */
export interface Envelope<C extends string> {
  readonly error: string
  readonly code: C
  readonly request_id: string
  readonly [field: string]: unknown
}

/**
 * The wire schema of an error class: the encoded side is the envelope (no `_tag`), the type side
 * the tagged error, so servers and clients can `Effect.catchTag` it. The request id is read from
 * `CurrentRequestId` while the server encodes the error.
 */
const wire = <A extends { readonly error: string; readonly request_id?: string | undefined }, const C extends string>(
  cls: ErrorClass<A>,
  code: C,
  status: number,
  description: string
): Schema.Schema<A, Envelope<C>> => {
  const { _tag, error, request_id, ...diagnostics } = cls.fields
  const encoded = Schema.Struct({
    error: Schema.String,
    code: Schema.Literal(code),
    request_id: Schema.String,
    ...diagnostics
  })
  return Schema.transformOrFail(encoded, Schema.typeSchema(cls), {
    strict: false,
    decode: ({ code: _code, ...props }) => ParseResult.succeed(new cls(props)),
    encode: (e) =>
      Effect.map(FiberRef.get(CurrentRequestId), (id) => ({
        ...(e as object),
        code,
        request_id: e.request_id ?? id
      }))
  }).annotations(HttpApiSchema.annotations({ status, description })) as any
}

const catalogue = {
  InvalidInput: [InvalidInput, "invalid_input", 400, "Missing field, wrong type or malformed JSON"],
  Unauthorized: [Unauthorized, "unauthorized", 401, "Token missing, invalid, expired or revoked; or wrong credentials"],
  Forbidden: [Forbidden, "forbidden", 403, "Valid token, but the resource belongs to another user"],
  NotFound: [NotFound, "not_found", 404, "Wrong or deleted id, or unknown route"],
  Conflict: [Conflict, "conflict", 409, "Duplicate resource, or state changed since read"],
  PayloadTooLarge: [PayloadTooLarge, "payload_too_large", 413, "Request body over 1 MiB"],
  UnsupportedMediaType: [
    UnsupportedMediaType,
    "unsupported_media_type",
    415,
    "A request body that is not application/json"
  ],
  LeverageTooHigh: [LeverageTooHigh, "leverage_too_high", 422, "Leverage outside 1 <= default <= max <= venue cap"],
  ProgramInvalid: [ProgramInvalid, "program_invalid", 422, "Program does not compile or lacks decide()"],
  UnsupportedLanguage: [UnsupportedLanguage, "unsupported_language", 422, "Program language is not supported"],
  VenueRejected: [VenueRejected, "venue_rejected", 422, "The venue refused the credentials"],
  NoFactorHistory: [
    NoFactorHistory,
    "no_factor_history",
    422,
    "The factor is sampled now and has no history to measure"
  ],
  SignalInUse: [SignalInUse, "signal_in_use", 409, "The signal is part of a pool; remove it from the pools first"],
  ExchangeMismatch: [
    ExchangeMismatch,
    "exchange_mismatch",
    422,
    "A pool's signals (or wallet tracking) are not on the pool's exchange"
  ],
  SymbolNotListed: [SymbolNotListed, "symbol_not_listed", 422, "A symbol is not listed on the venue"],
  NoMarketData: [
    NoMarketData,
    "no_market_data",
    422,
    "The backtest's range holds no candles (it starts in the future)"
  ],
  RateLimited: [RateLimited, "rate_limited", 429, "Request quota exceeded; wait retry_after seconds"],
  InternalError: [InternalError, "internal_error", 500, "Unexpected failure"],
  UpstreamError: [
    UpstreamError,
    "upstream_error",
    502,
    "The venue or provider cannot be reached or answered with a failure"
  ],
  Unavailable: [Unavailable, "unavailable", 503, "Storage or a dependency is unavailable"],
  UpstreamTimeout: [UpstreamTimeout, "upstream_timeout", 504, "The venue or provider did not answer in time"]
} as const

type Catalogue = typeof catalogue

/**
 * The error catalogue as wire schemas, each with its HTTP status and stable `code`.
 * Endpoints declare them with `.addError(ApiError.NotFound)`.
 */
export const ApiError = Object.fromEntries(
  Object.entries(catalogue).map(([name, [cls, code, status, description]]) => [
    name,
    wire(cls as ErrorClass<any>, code, status, description)
  ])
) as {
  readonly [K in keyof Catalogue]: Schema.Schema<InstanceType<Catalogue[K][0]>, Envelope<Catalogue[K][1]>>
}

/** One row per error: name, code, status and meaning; `docs/errors.md` lists the same. */
export const errorCatalogue = Object.entries(catalogue).map(([name, [, code, status, description]]) => ({
  name,
  code,
  status,
  description
}))
