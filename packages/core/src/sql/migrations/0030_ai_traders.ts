import { script } from "../SqlScript.js"

/**
 * AI traders (migration 0030): an AI account's trading settings (its symbols, timeframe, schedule,
 * the signal pools it listens to, its own prompts, and cost limits) and its decision rounds. A round is a durable job (see jobs/JobQueue.ts), one
 * per account at a time, that keeps what the model was asked and answered, the decisions, the
 * orders that followed, the tokens, the cost and the latency.
 */
export default script(`
  CREATE TABLE ai_traders (
    account_id integer PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    enabled boolean NOT NULL,
    symbols text NOT NULL,
    timeframe text NOT NULL,
    interval_minutes integer NOT NULL,
    signal_pool_ids text NOT NULL DEFAULT '[]',
    system_prompt text,
    user_template text,
    max_rounds_per_hour integer,
    max_tokens_per_day integer,
    next_run_at timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  );
  CREATE INDEX ai_traders_due ON ai_traders (next_run_at) WHERE enabled AND next_run_at IS NOT NULL;

  CREATE TABLE ai_decision_rounds (
    id serial PRIMARY KEY,
    user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    account_id integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    trigger text NOT NULL,
    idempotency_key text NOT NULL UNIQUE,
    status text NOT NULL,
    progress double precision NOT NULL DEFAULT 0,
    attempts integer NOT NULL DEFAULT 0,
    lease_until timestamptz,
    claimed_by text,
    error text,
    result text,
    outcome text,
    model text,
    prompt text,
    raw_answer text,
    decisions text,
    orders text,
    prompt_tokens integer NOT NULL DEFAULT 0,
    completion_tokens integer NOT NULL DEFAULT 0,
    cost numeric NOT NULL DEFAULT 0,
    latency_ms integer,
    created_at timestamptz NOT NULL,
    started_at timestamptz,
    finished_at timestamptz
  );
  -- One round per account at a time, whichever replica claims it.
  CREATE UNIQUE INDEX ai_decision_rounds_one_running ON ai_decision_rounds (account_id) WHERE status = 'running';
  CREATE INDEX ai_decision_rounds_claimable ON ai_decision_rounds (id) WHERE status IN ('queued', 'running');
  CREATE INDEX ai_decision_rounds_by_account ON ai_decision_rounds (account_id, id DESC);
`)
