import type { SqlError } from "@effect/sql/SqlError"
import { Context, type Stream } from "effect"

/**
 * PostgreSQL's `LISTEN`, on PGlite and PostgreSQL alike: the payloads sent to a channel with
 * `pg_notify` (through `SqlClient`) from when the stream starts. One sent inside a transaction
 * arrives when it commits, and not at all if it rolls back. A notification can be lost (a dropped
 * listening connection), so a listener keeps a slow poll too.
 */
export class Notifications extends Context.Tag("@trading-platform/core/Notifications")<Notifications, {
  readonly listen: (channel: string) => Stream.Stream<string, SqlError>
}>() {}
