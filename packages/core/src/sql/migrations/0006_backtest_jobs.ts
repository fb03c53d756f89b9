import { script } from "../SqlScript.js"

export default script(`
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
`)
