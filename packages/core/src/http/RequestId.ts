import { FiberRef } from "effect"
import { globalValue } from "effect/GlobalValue"

/** The id of the request being served; the server sets it, error encoding reads it. */
export const CurrentRequestId = globalValue(
  "@trading-platform/core/CurrentRequestId",
  () => FiberRef.unsafeMake<string>("")
)

/** An incoming `X-Request-Id` is reused only when it is this shape, so logs stay safe to read. */
export const isValidRequestId = (id: string): boolean => /^[\w.:-]{1,128}$/.test(id)
