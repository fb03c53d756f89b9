import { describe, expect, it } from "@effect/vitest"
import {
  ApiError,
  CurrentRequestId,
  errorCatalogue,
  InvalidInput,
  NotFound,
  RateLimited
} from "@trading-platform/core/contract"
import { Effect, Schema } from "effect"
import { readFileSync } from "node:fs"

describe("error catalogue", () => {
  it("has one stable code per error, with the statuses docs/errors.md lists", () => {
    const byCode = Object.fromEntries(errorCatalogue.map((e) => [e.code, e.status]))
    expect(byCode).toEqual({
      invalid_input: 400,
      unauthorized: 401,
      forbidden: 403,
      not_found: 404,
      method_not_allowed: 405,
      conflict: 409,
      payload_too_large: 413,
      unsupported_media_type: 415,
      leverage_too_high: 422,
      program_invalid: 422,
      unsupported_language: 422,
      venue_rejected: 422,
      signal_in_use: 409,
      exchange_mismatch: 422,
      symbol_not_listed: 422,
      no_factor_history: 422,
      no_market_data: 422,
      risk_blocked: 422,
      order_rejected: 422,
      bias_check_required: 422,
      rate_limited: 429,
      internal_error: 500,
      upstream_error: 502,
      unavailable: 503,
      upstream_timeout: 504
    })
  })

  it.effect("encodes exactly {error, code, request_id} plus the error's own fields, with the current request id", () =>
    Effect.gen(function*() {
      const notFound = yield* Schema.encode(ApiError.NotFound)(new NotFound({ error: "Account 7 not found" })).pipe(
        Effect.locally(CurrentRequestId, "req-1")
      )
      expect(notFound).toEqual({ error: "Account 7 not found", code: "not_found", request_id: "req-1" })
      const limited = yield* Schema.encode(ApiError.RateLimited)(
        new RateLimited({ error: "slow down", retry_after: 3 })
      ).pipe(
        Effect.locally(CurrentRequestId, "req-2")
      )
      expect(limited).toEqual({ error: "slow down", code: "rate_limited", request_id: "req-2", retry_after: 3 })
    }))

  it.effect("decodes an envelope back into the tagged error, and refuses another code", () =>
    Effect.gen(function*() {
      const decoded = yield* Schema.decodeUnknown(ApiError.InvalidInput)({
        error: "bad",
        code: "invalid_input",
        request_id: "r",
        issues: [{ path: "email", message: "required" }]
      })
      expect(decoded).toBeInstanceOf(InvalidInput)
      expect(decoded.issues).toEqual([{ path: "email", message: "required" }])
      const wrong = yield* Schema.decodeUnknown(ApiError.NotFound)({ error: "x", code: "conflict", request_id: "r" })
        .pipe(Effect.flip)
      expect(wrong._tag).toBe("ParseError")
    }))

  it("is documented, every code, in docs/errors.md", () => {
    const doc = readFileSync(new URL("../../../../docs/errors.md", import.meta.url), "utf8")
    for (const { code, status } of errorCatalogue) expect(doc).toMatch(new RegExp(`\\| ${status} \\| \`${code}\``))
  })
})
