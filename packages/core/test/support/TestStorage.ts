import { PgClient } from "@effect/sql-pg"
import * as SqlClient from "@effect/sql/SqlClient"
import {
  PlatformConfig,
  type PlatformOptions,
  platformOptions,
  rateLimitPolicyPerMinute,
  type StorageConfig
} from "@trading-platform/core"
import { Duration, Effect, Layer, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"

/** PostgreSQL for the suites that need it; `.ci/run` sets it when the server answers. */
export const testDatabaseUrl = process.env["TEST_DATABASE_URL"]
/** Redis for the suites that need it; `.ci/run` sets it when the server answers. */
export const testRedisUrl = process.env["TEST_REDIS_URL"]

if (!testDatabaseUrl) console.warn("TEST_DATABASE_URL is not set: PostgreSQL suites are SKIPPED")
if (!testRedisUrl) console.warn("TEST_REDIS_URL is not set: Redis suites are SKIPPED")

/** A fresh PostgreSQL database on the test server, dropped when the scope closes. */
const freshPostgres = (adminUrl: string) => {
  const admin = PgClient.layer({ url: Redacted.make(adminUrl) })
  const name = `tp_test_${randomBytes(6).toString("hex")}`
  const run = (statement: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, unknown>) =>
    Effect.flatMap(SqlClient.SqlClient, statement).pipe(Effect.provide(admin), Effect.scoped, Effect.orDie)
  return Effect.acquireRelease(
    run((sql) => sql`CREATE DATABASE ${sql(name)}`),
    () => run((sql) => sql`DROP DATABASE IF EXISTS ${sql(name)} WITH (FORCE)`)
  ).pipe(Effect.map((): StorageConfig => {
    const url = new URL(adminUrl)
    url.pathname = `/${name}`
    return { kind: "postgres", url: Redacted.make(url.toString()) }
  }))
}

export interface TestStorage {
  readonly name: "pglite" | "postgres"
  /** Whether this machine can run it (PostgreSQL needs TEST_DATABASE_URL). */
  readonly available: boolean
  readonly storage: Effect.Effect<StorageConfig, never, import("effect/Scope").Scope>
}

/** Every storage the suites run against: in-memory PGlite always, PostgreSQL when configured. */
export const testStorages: ReadonlyArray<TestStorage> = [
  { name: "pglite", available: true, storage: Effect.succeed({ kind: "pglite", dataDir: "memory://" }) },
  {
    name: "postgres",
    available: testDatabaseUrl !== undefined,
    storage: Effect.suspend(() => freshPostgres(testDatabaseUrl!))
  }
]

/** Settings for tests: generous limits unless a test sets its own. */
export const testOptions = (storage: StorageConfig, overrides: Partial<PlatformOptions> = {}): PlatformOptions => {
  const defaults = platformOptions()
  // A venue in http mode must never leave this machine; tests that use one set its URL.
  const offline = { ...defaults.venues.venue1, baseUrl: "http://127.0.0.1:9", timeout: Duration.seconds(5), retries: 0 }
  return platformOptions({
    storage,
    rateLimits: rateLimitPolicyPerMinute({ auth: 10_000, read: 10_000, write: 10_000 }),
    maxQueuedJobsPerUser: 1_000,
    secretKey: Option.some(Redacted.make("test-secret-key-0123456789abcdef0123456789")),
    // No candle sync workers unless a suite asks, as for the other jobs below.
    venues: {
      ...defaults.venues,
      venue1: offline,
      venue2: offline,
      candleSyncs: { ...defaults.venues.candleSyncs, concurrency: 0 }
    },
    // No backtest workers unless a suite asks: an idle worker's poll would make every TestClock.adjust step through it.
    backtests: { ...defaults.backtests, concurrency: 0 },
    // Likewise no automation scheduler, run workers or PnL refresher unless a suite asks.
    automation: { ...defaults.automation, enabled: false, concurrency: 0 },
    assistant: { ...defaults.assistant, insightJobs: { ...defaults.assistant.insightJobs, concurrency: 0 } },
    // No background signal sampler unless a suite asks, for the same reason.
    signals: { ...defaults.signals, sampler: false },
    // Purges yearly unless a suite asks: an hourly round would make a TestClock.adjust by months step through thousands.
    retention: { ...defaults.retention, purgeInterval: Duration.days(365) },
    // Likewise the news fetcher: tests fetch with POST /api/news/refresh.
    news: { ...defaults.news, fetchInterval: Duration.days(365) },
    // scrypt at N=2^10 (PASSWORD_SCRYPT_COST): OWASP's 2^17 takes a few hundred ms and 128 MiB a hash,
    // and the suites register hundreds of users. Suites about hashing set their own.
    passwords: { scryptCost: 1024 },
    ...overrides
  })
}

/** `PlatformConfig` on the given storage (a fresh database for PostgreSQL). */
export const TestConfig = (storage: TestStorage = testStorages[0]!, overrides: Partial<PlatformOptions> = {}) =>
  Layer.scoped(PlatformConfig, Effect.map(storage.storage, (s) => testOptions(s, overrides)))
