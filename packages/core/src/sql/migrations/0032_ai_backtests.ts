import { script } from "../SqlScript.js"

/**
 * AI backtests and the model-call cache (migration 0032). `ai_model_calls` keeps each answer an AI
 * account's model gave, per user, under the SHA-256 of the call (the model's base URL and name, the
 * messages, the call's parameters; never a key), so a prompt seen before is answered without a
 * call. `ai_backtests` holds the backtests of AI accounts as durable jobs (see jobs/JobQueue.ts),
 * with the settings they run with and, once completed, their result. A decision round records
 * whether its answer came from the cache.
 */
export default script(`
  CREATE TABLE ai_model_calls (
    user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    key text NOT NULL,
    model text NOT NULL,
    base_url text,
    answer text NOT NULL,
    prompt_tokens integer NOT NULL,
    completion_tokens integer NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (user_id, key)
  );

  CREATE TABLE ai_backtests (
    id serial PRIMARY KEY,
    user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    account_id integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    mode text NOT NULL,
    symbols text NOT NULL,
    timeframe text NOT NULL,
    interval_minutes integer NOT NULL,
    start_at timestamptz NOT NULL,
    end_at timestamptz NOT NULL,
    initial_balance numeric NOT NULL,
    fee_rate double precision NOT NULL,
    slippage double precision NOT NULL,
    margin_mode text NOT NULL,
    leverage double precision NOT NULL,
    max_model_calls integer NOT NULL,
    system_prompt text,
    user_template text,
    status text NOT NULL,
    progress double precision NOT NULL DEFAULT 0,
    attempts integer NOT NULL DEFAULT 0,
    lease_until timestamptz,
    claimed_by text,
    error text,
    result text,
    created_at timestamptz NOT NULL,
    started_at timestamptz,
    finished_at timestamptz
  );
  CREATE INDEX ai_backtests_by_account ON ai_backtests (account_id, id DESC);
  CREATE INDEX ai_backtests_claimable ON ai_backtests (id) WHERE status IN ('queued', 'running');

  ALTER TABLE ai_decision_rounds ADD COLUMN cached boolean NOT NULL DEFAULT false;
`)
