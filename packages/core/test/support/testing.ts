/**
 * Test support for this repository's suites, as `@trading-platform/core/testing` (from the
 * sources only; it is not part of the published package): storage for each suite (PGlite, and
 * PostgreSQL and Redis when configured), fake venue APIs, and probes into background work.
 */
export { backtestThreadCounts } from "../../src/backtests/BacktestThread.js"
export * from "./FakeVenues.js"
export * from "./TestStorage.js"
