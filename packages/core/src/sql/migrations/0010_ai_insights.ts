import { script } from "../SqlScript.js"

// A durable job per insight (the job columns as in docs/contributing.md "Jobs").
export default script(`
  CREATE TABLE ai_insights (
    id serial PRIMARY KEY,
    user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    symbol text NOT NULL,
    exchange text NOT NULL,
    timeframe text NOT NULL,
    prompt text,
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
  CREATE INDEX ai_insights_claimable ON ai_insights (id) WHERE status IN ('queued', 'running');
`)
