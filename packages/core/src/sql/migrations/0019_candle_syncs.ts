import { script } from "../SqlScript.js"

// A durable job per candle sync (the job columns as in docs/contributing.md "Jobs"): a venue's bars
// of one symbol and timeframe over [from_time, to_time), fetched into the candle store.
export default script(`
  CREATE TABLE candle_syncs (
    id serial PRIMARY KEY,
    user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    exchange text NOT NULL,
    symbol text NOT NULL,
    timeframe text NOT NULL,
    from_time bigint NOT NULL,
    to_time bigint NOT NULL,
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
  CREATE INDEX candle_syncs_claimable ON candle_syncs (id) WHERE status IN ('queued', 'running');
`)
