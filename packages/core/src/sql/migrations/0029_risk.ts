import { script } from "../SqlScript.js"

/**
 * The risk firewall (issue 33 point 3): an account's mode and limits (null: no limit), the equity
 * peak its drawdown is measured from and the equity at the start of its UTC day, one row per
 * account once it is first checked; and the log of its mode changes. Manual orders have no run,
 * binding or program (those columns allow null since 0008); a flatten closes a position as an exit.
 */
export default script(`
  CREATE TABLE account_risk (
    account_id integer PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    mode text NOT NULL DEFAULT 'active',
    resume_at timestamptz,
    reason text,
    max_position_notional numeric,
    max_total_notional numeric,
    max_leverage integer,
    max_orders_per_minute integer,
    max_daily_loss numeric,
    max_drawdown_percent double precision,
    peak_equity numeric,
    day_start timestamptz,
    day_start_equity numeric,
    updated_at timestamptz NOT NULL
  );
  CREATE INDEX account_risk_due ON account_risk (account_id) WHERE mode IN ('flatten', 'paused');

  CREATE TABLE account_risk_events (
    id serial PRIMARY KEY,
    account_id integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    from_mode text NOT NULL,
    to_mode text NOT NULL,
    reason text,
    source text NOT NULL,
    created_at timestamptz NOT NULL
  );
  CREATE INDEX account_risk_events_by_account ON account_risk_events (account_id, id DESC);
  CREATE INDEX automation_orders_recent ON automation_orders (account_id, created_at) WHERE trigger = 'run';
`)
