import { script } from "../SqlScript.js"

// Pools list their signals in signal_pool_members; a signal in a pool cannot be deleted (409 signal_in_use).
export default script(`
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
`)
