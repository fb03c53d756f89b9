import { Context, Effect } from "effect"

/**
 * What background work (leased loops, periodic rounds, job workers) waits for before its first
 * pass: nothing by default. The reference server holds it until a second after it listens, since
 * the first passes' statements (about thirty, on PGlite's one connection and the one thread) would
 * otherwise run ahead of its first requests (docs/performance.md).
 */
export class BackgroundStart extends Context.Reference<BackgroundStart>()("@trading-platform/core/BackgroundStart", {
  defaultValue: (): Effect.Effect<void> => Effect.void
}) {}
