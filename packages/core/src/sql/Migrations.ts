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
  // ai_usage outlives deleted conversations, so deleting one does not reset the hourly limits.
  "0007_assistant": script(`
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
