import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import m0001 from "./migrations/0001_users_and_sessions.js"
import m0002 from "./migrations/0002_accounts.js"
import m0003 from "./migrations/0003_venue_credentials.js"
import m0004 from "./migrations/0004_trader_history.js"
import m0005 from "./migrations/0005_programs.js"
import m0006 from "./migrations/0006_backtest_jobs.js"
import m0007 from "./migrations/0007_signals.js"
import m0008 from "./migrations/0008_automation.js"
import m0009 from "./migrations/0009_assistant.js"
import m0010 from "./migrations/0010_ai_insights.js"
import m0011 from "./migrations/0011_news.js"
import m0012 from "./migrations/0012_periodic_tasks.js"
import m0013 from "./migrations/0013_leases.js"
import m0014 from "./migrations/0014_automation_trade_key.js"
import m0015 from "./migrations/0015_user_delete_cascade.js"
import m0016 from "./migrations/0016_candle_store.js"
import m0017 from "./migrations/0017_signal_windows.js"
import m0018 from "./migrations/0018_exit_trigger_price.js"
import m0019 from "./migrations/0019_candle_syncs.js"
import m0020 from "./migrations/0020_funding_rates.js"
import m0021 from "./migrations/0021_trading_rules.js"
import m0022 from "./migrations/0022_news_per_source.js"
import m0023 from "./migrations/0023_operators.js"
import m0024 from "./migrations/0024_backtest_warmup.js"
import m0025 from "./migrations/0025_backtest_portfolios.js"
import m0026 from "./migrations/0026_portfolio_bindings.js"
import m0028 from "./migrations/0028_reconciliation.js"
import m0029 from "./migrations/0029_risk.js"
import m0030 from "./migrations/0030_ai_traders.js"
import m0031 from "./migrations/0031_scheduler_wakeups.js"
import m0032 from "./migrations/0032_ai_backtests.js"
import m0033 from "./migrations/0033_arena_equity.js"
import m0034 from "./migrations/0034_risk_passed.js"
import m0035 from "./migrations/0035_program_parameters.js"
import m0036 from "./migrations/0036_bias_checks.js"
import m0037 from "./migrations/0037_optimizations.js"
import m0038 from "./migrations/0038_job_owner_indexes.js"
import m0039 from "./migrations/0039_trial_metrics.js"
import m0040 from "./migrations/0040_claimable_by_owner.js"
import { scriptText } from "./SqlScript.js"

/**
 * The one schema, for PGlite and PostgreSQL alike: one file per migration in `migrations/`,
 * listed here in order. Append new migrations; never edit a released one. Timestamps are written
 * by the services from the Effect Clock, so tests can move time.
 */
const byName = {
  "0001_users_and_sessions": m0001,
  "0002_accounts": m0002,
  "0003_venue_credentials": m0003,
  "0004_trader_history": m0004,
  "0005_programs": m0005,
  "0006_backtest_jobs": m0006,
  "0007_signals": m0007,
  "0008_automation": m0008,
  "0009_assistant": m0009,
  "0010_ai_insights": m0010,
  "0011_news": m0011,
  "0012_periodic_tasks": m0012,
  "0013_leases": m0013,
  "0014_automation_trade_key": m0014,
  "0015_user_delete_cascade": m0015,
  "0016_candle_store": m0016,
  "0017_signal_windows": m0017,
  "0018_exit_trigger_price": m0018,
  "0019_candle_syncs": m0019,
  "0020_funding_rates": m0020,
  "0021_trading_rules": m0021,
  "0022_news_per_source": m0022,
  "0023_operators": m0023,
  "0024_backtest_warmup": m0024,
  "0025_backtest_portfolios": m0025,
  "0026_portfolio_bindings": m0026,
  "0028_reconciliation": m0028,
  "0029_risk": m0029,
  "0030_ai_traders": m0030,
  "0031_scheduler_wakeups": m0031,
  "0032_ai_backtests": m0032,
  "0033_arena_equity": m0033,
  "0034_risk_passed": m0034,
  "0035_program_parameters": m0035,
  "0036_bias_checks": m0036,
  "0037_optimizations": m0037,
  "0038_job_owner_indexes": m0038,
  "0039_trial_metrics": m0039,
  "0040_claimable_by_owner": m0040
}
export const migrations = Migrator.fromRecord(byName)

/** Each migration's name and statements (undefined for one that is not a `script`): what a migrated template is keyed by. */
export const migrationTexts: ReadonlyArray<readonly [string, string | undefined]> = Object.entries(byName).map((
  [name, migration]
) => [name, scriptText(migration)])

const table = "trading_platform_migrations"
const latest = Math.max(...Object.keys(byName).map((name) => Number.parseInt(name, 10)))

/**
 * Runs every pending migration in one transaction; a concurrent runner waits for the lock. A
 * schema already current is seen in one statement, before the migrator's six (its locked
 * transaction took about 40 ms of every embedded start). A missing table reads as nothing applied.
 */
export const migrate = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const applied = yield* sql<{ id: number | null }>`SELECT max(migration_id) AS id FROM ${sql(table)}`.pipe(
    Effect.map(([row]) => row?.id ?? 0),
    Effect.orElseSucceed(() => 0)
  )
  return applied >= latest ? [] : yield* Migrator.make({})({ loader: migrations, table })
})

// Any number, the same in every process: the key of the lock that runs migrations one at a time.
const migrationLock = 20_261_126

/**
 * `migrate` for replicas that may start together on one PostgreSQL database: they take turns under
 * an advisory lock held on a connection of its own (freed with it, should the process die). The
 * migrator creates its own table before its locked transaction, and two `CREATE TABLE IF NOT EXISTS`
 * at once can fail (`pg_type_typname_nsp_index`); a replica that waited finds the schema current.
 */
export const migrateAlone = Effect.scoped(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const held = yield* sql.reserve
  yield* Effect.acquireRelease(
    held.executeRaw("SELECT pg_advisory_lock($1)", [migrationLock]),
    () => Effect.ignore(held.executeRaw("SELECT pg_advisory_unlock($1)", [migrationLock]))
  )
  return yield* migrate
}))
