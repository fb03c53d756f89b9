import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

const script = (text: string) => Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))

/**
 * The one schema, for PGlite and PostgreSQL alike. Append new migrations; never edit a released one.
 * Timestamps are written by the services from the Effect Clock, so tests can move time.
 */
export const migrations = Migrator.fromRecord({
  "0001_users_and_sessions": script(`
    CREATE TABLE users (
      id serial PRIMARY KEY,
      email text NOT NULL,
      username text NOT NULL,
      password_hash text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );
    CREATE UNIQUE INDEX users_email_key ON users (lower(email));
    CREATE UNIQUE INDEX users_username_key ON users (lower(username));
    CREATE TABLE sessions (
      id serial PRIMARY KEY,
      user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      token_hash text NOT NULL UNIQUE,
      user_agent text,
      created_at timestamptz NOT NULL,
      last_used_at timestamptz,
      expires_at timestamptz NOT NULL,
      revoked_at timestamptz
    );
    CREATE INDEX sessions_active_by_user ON sessions (user_id, created_at DESC) WHERE revoked_at IS NULL;
  `),
  // Secrets are stored sealed (AES-256-GCM) in *_sealed columns, never in plain text.
  "0002_accounts": script(`
    CREATE TABLE accounts (
      id serial PRIMARY KEY,
      user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      name text NOT NULL,
      account_type text NOT NULL,
      initial_capital numeric NOT NULL,
      current_cash numeric NOT NULL,
      frozen_cash numeric NOT NULL,
      is_active boolean NOT NULL,
      show_on_dashboard boolean NOT NULL,
      venue1_enabled boolean NOT NULL,
      avatar_preset_id integer,
      base_url text,
      model text,
      default_leverage integer,
      max_leverage integer,
      venue1_environment text,
      api_key_sealed text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );
    CREATE INDEX accounts_by_user ON accounts (user_id, id);
  `),
  "0003_venue_credentials": script(`
    CREATE TABLE venue_credentials (
      account_id integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      venue text NOT NULL,
      environment text NOT NULL,
      public_id text,
      secret_sealed text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (account_id, venue)
    );
  `),
  // The unique keys are DESIGN's duplicate rules for trader import.
  "0004_trader_history": script(`
    CREATE TABLE account_decision_logs (
      id serial PRIMARY KEY,
      account_id integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      decision_time timestamptz NOT NULL,
      symbol text NOT NULL,
      operation text NOT NULL,
      target_portion_of_balance numeric,
      leverage integer,
      reason text,
      UNIQUE (account_id, decision_time, symbol)
    );
    CREATE TABLE account_trades (
      id serial PRIMARY KEY,
      account_id integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      trade_time timestamptz NOT NULL,
      symbol text NOT NULL,
      side text NOT NULL,
      quantity numeric NOT NULL,
      price numeric NOT NULL,
      fee numeric,
      realized_pnl numeric,
      UNIQUE (account_id, trade_time, symbol, side)
    );
  `),
  "0005_programs": script(`
    CREATE TABLE programs (
      id serial PRIMARY KEY,
      user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      name text NOT NULL,
      description text,
      language text NOT NULL,
      code text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );
    CREATE INDEX programs_by_user ON programs (user_id, created_at DESC);
  `),
  "0006_backtest_jobs": script(`
    CREATE TABLE backtests (
      id serial PRIMARY KEY,
      user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      program_id integer REFERENCES programs (id) ON DELETE SET NULL,
      account_id integer REFERENCES accounts (id) ON DELETE SET NULL,
      symbol text NOT NULL,
      exchange text NOT NULL,
      timeframe text NOT NULL,
      start_at timestamptz NOT NULL,
      end_at timestamptz NOT NULL,
      initial_balance numeric NOT NULL,
      fee_rate double precision NOT NULL,
      slippage double precision NOT NULL,
      leverage double precision NOT NULL,
      code text NOT NULL,
      status text NOT NULL,
      progress double precision NOT NULL DEFAULT 0,
      attempts integer NOT NULL DEFAULT 0,
      lease_until timestamptz,
      claimed_by text,
      error text,
      result text,
      total_pnl numeric,
      total_trades integer,
      winning_trades integer,
      created_at timestamptz NOT NULL,
      started_at timestamptz,
      finished_at timestamptz
    );
    CREATE INDEX backtests_by_user ON backtests (user_id, created_at DESC, id DESC);
    CREATE INDEX backtests_claimable ON backtests (id) WHERE status IN ('queued', 'running');
  `),
  // Pools list their signals in signal_pool_members; a signal in a pool cannot be deleted (409 signal_in_use).
  "0007_signals": script(`
    CREATE TABLE signals (
      id serial PRIMARY KEY,
      user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      exchange text NOT NULL,
      signal_name text NOT NULL,
      description text,
      trigger_condition text NOT NULL,
      enabled boolean NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );
    CREATE INDEX signals_by_user ON signals (user_id, id);
    CREATE TABLE signal_pools (
      id serial PRIMARY KEY,
      user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      exchange text NOT NULL,
      pool_name text NOT NULL,
      source_type text NOT NULL,
      source_config text NOT NULL,
      symbols text NOT NULL,
      logic text NOT NULL,
      enabled boolean NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );
    CREATE INDEX signal_pools_by_user ON signal_pools (user_id, id);
    CREATE TABLE signal_pool_members (
      pool_id integer NOT NULL REFERENCES signal_pools (id) ON DELETE CASCADE,
      signal_id integer NOT NULL REFERENCES signals (id),
      position integer NOT NULL,
      PRIMARY KEY (pool_id, signal_id)
    );
    CREATE INDEX signal_pool_members_by_signal ON signal_pool_members (signal_id);
    CREATE TABLE signal_samples (
      exchange text NOT NULL,
      symbol text NOT NULL,
      sampled_at timestamptz NOT NULL,
      price double precision NOT NULL,
      volume_24h double precision NOT NULL,
      open_interest double precision NOT NULL,
      funding_rate double precision NOT NULL,
      taker_buy_volume double precision NOT NULL,
      taker_sell_volume double precision NOT NULL,
      bid_depth double precision NOT NULL,
      ask_depth double precision NOT NULL,
      PRIMARY KEY (exchange, symbol, sampled_at)
    );
    CREATE INDEX signal_samples_by_time ON signal_samples (sampled_at);
    CREATE TABLE signal_sample_health (
      exchange text NOT NULL,
      symbol text NOT NULL,
      last_sampled_at timestamptz,
      errors integer NOT NULL DEFAULT 0,
      last_error text,
      PRIMARY KEY (exchange, symbol)
    );
    CREATE TABLE signal_pool_edges (
      pool_id integer NOT NULL REFERENCES signal_pools (id) ON DELETE CASCADE,
      symbol text NOT NULL,
      met boolean NOT NULL,
      changed_at timestamptz NOT NULL,
      PRIMARY KEY (pool_id, symbol)
    );
    CREATE TABLE signal_triggers (
      id serial PRIMARY KEY,
      pool_id integer NOT NULL REFERENCES signal_pools (id) ON DELETE CASCADE,
      user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      symbol text NOT NULL,
      fired_at timestamptz NOT NULL,
      pool_name text NOT NULL,
      exchange text NOT NULL,
      source_type text NOT NULL,
      logic text NOT NULL,
      signal_values text NOT NULL,
      wallet_event text
    );
    CREATE INDEX signal_triggers_by_user ON signal_triggers (user_id, fired_at DESC, id DESC);
    CREATE TABLE signal_wallets (
      pool_id integer NOT NULL REFERENCES signal_pools (id) ON DELETE CASCADE,
      address text NOT NULL,
      positions text NOT NULL,
      last_sync_at timestamptz,
      errors integer NOT NULL DEFAULT 0,
      last_error text,
      PRIMARY KEY (pool_id, address)
    );
    CREATE TABLE engine_leases (
      name text PRIMARY KEY,
      holder text NOT NULL,
      lease_until timestamptz NOT NULL
    );
  `),
  // ai_usage outlives deleted conversations, so deleting one does not reset the hourly limits.
  "0008_assistant": script(`
    CREATE TABLE ai_conversations (
      id serial PRIMARY KEY,
      user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      title text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );
    CREATE INDEX ai_conversations_by_user ON ai_conversations (user_id, updated_at DESC, id DESC);
    CREATE TABLE ai_messages (
      id serial PRIMARY KEY,
      conversation_id integer NOT NULL REFERENCES ai_conversations (id) ON DELETE CASCADE,
      role text NOT NULL,
      content text NOT NULL,
      tool_calls text NOT NULL,
      prompt_tokens integer,
      completion_tokens integer,
      created_at timestamptz NOT NULL
    );
    CREATE INDEX ai_messages_by_conversation ON ai_messages (conversation_id, id);
    CREATE TABLE ai_usage (
      id serial PRIMARY KEY,
      user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      kind text NOT NULL,
      created_at timestamptz NOT NULL
    );
    CREATE INDEX ai_usage_by_user ON ai_usage (user_id, kind, created_at);
  `)
})

/** Runs every pending migration in one transaction; a concurrent runner waits for the lock. */
export const migrate = Migrator.make({})({ loader: migrations, table: "trading_platform_migrations" })
