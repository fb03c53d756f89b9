import { SqlError } from "@effect/sql/SqlError"
import { Cause, Effect, ParseResult } from "effect"

type StorageFailure = SqlError | ParseResult.ParseError | Cause.NoSuchElementException

const isStorageFailure = (e: unknown): e is StorageFailure =>
  e instanceof SqlError || ParseResult.isParseError(e) || Cause.isNoSuchElementException(e)

/**
 * Storage failures (the database unreachable, a row that does not decode) are not domain
 * errors: they become defects, which the server turns into 503 `unavailable` or 500 in one place.
 */
export const dieOnStorageFailure = <A, E, R>(
  self: Effect.Effect<A, E, R>
): Effect.Effect<A, Exclude<E, StorageFailure>, R> => Effect.catchIf(self, isStorageFailure, Effect.die) as any
