import { script } from "../SqlScript.js"

/**
 * The tables of live automation (migration 0008): bindings, their runs, the orders the runs place,
 * the positions the fills leave, the arena PnL per account, and the leases of background loops.
 */
export default script(`
  CREATE TABLE automation_bindings (
    id serial PRIMARY KEY,
    user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    program_id integer NOT NULL REFERENCES programs (id) ON DELETE CASCADE,
    account_id integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    symbols text NOT NULL,
    timeframe text NOT NULL,
    interval_minutes integer,
    signal_pool_ids text NOT NULL,
    params text NOT NULL,
    leverage integer,
    enabled boolean NOT NULL,
    next_run_at timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  );
  CREATE INDEX automation_bindings_by_program ON automation_bindings (program_id, id);
  CREATE INDEX automation_bindings_due ON automation_bindings (next_run_at) WHERE enabled AND next_run_at IS NOT NULL;

  -- A durable job (see jobs/JobQueue.ts); idempotency_key makes every trigger (a schedule slot, a signal trigger) one run, whichever replica saw it.
  CREATE TABLE automation_runs (
    id serial PRIMARY KEY,
    binding_id integer NOT NULL REFERENCES automation_bindings (id) ON DELETE CASCADE,
    user_id integer NOT NULL,
    program_id integer NOT NULL,
    account_id integer NOT NULL,
    symbol text NOT NULL,
    trigger text NOT NULL,
    idempotency_key text NOT NULL UNIQUE,
    status text NOT NULL,
    progress double precision NOT NULL DEFAULT 0,
    attempts integer NOT NULL DEFAULT 0,
    lease_until timestamptz,
    claimed_by text,
    decision text,
    error text,
    result text,
    created_at timestamptz NOT NULL,
    started_at timestamptz,
    finished_at timestamptz
  );
  -- One run per binding at a time, whichever replica claims it.
  CREATE UNIQUE INDEX automation_runs_one_running ON automation_runs (binding_id) WHERE status = 'running';
  CREATE INDEX automation_runs_claimable ON automation_runs (id) WHERE status IN ('queued', 'running');
  CREATE INDEX automation_runs_by_binding ON automation_runs (binding_id, id DESC);

  -- One order per run (run_id is the idempotency key): a run taken over after a crash finds its order.
  CREATE TABLE automation_orders (
    id serial PRIMARY KEY,
    run_id integer UNIQUE,
    binding_id integer,
    program_id integer,
    user_id integer NOT NULL,
    account_id integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    symbol text NOT NULL,
    exchange text NOT NULL,
    route text NOT NULL,
    side text NOT NULL,
    quantity numeric NOT NULL,
    leverage integer NOT NULL,
    status text NOT NULL,
    venue_order_id text,
    price numeric,
    fee numeric,
    realized_pnl numeric,
    closed_quantity numeric,
    error text,
    created_at timestamptz NOT NULL,
    filled_at timestamptz
  );
  CREATE INDEX automation_orders_by_account ON automation_orders (account_id, id DESC);
  CREATE INDEX automation_orders_filled ON automation_orders (account_id, id) WHERE status = 'filled';

  CREATE TABLE account_positions (
    account_id integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    symbol text NOT NULL,
    exchange text NOT NULL,
    side text NOT NULL,
    size numeric NOT NULL,
    entry_price numeric NOT NULL,
    leverage integer NOT NULL,
    margin numeric NOT NULL,
    opened_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (account_id, symbol)
  );

  CREATE TABLE arena_pnl (
    account_id integer PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    realized_pnl numeric NOT NULL,
    unrealized_pnl numeric NOT NULL,
    fees numeric NOT NULL,
    last_order_id integer NOT NULL,
    error text,
    refreshed_at timestamptz NOT NULL
  );

  CREATE TABLE background_leases (
    name text PRIMARY KEY,
    holder text NOT NULL,
    lease_until timestamptz NOT NULL,
    last_run_at timestamptz,
    last_error text
  );
`)
