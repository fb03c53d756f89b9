import { script } from "../SqlScript.js"

/**
 * The rulebook's terms. A backtest keeps its maker fee, slippage model, fill timing and margin
 * mode; those that ran before filled at the close they decided on, charged the taker fee on every
 * fill and isolated their margin. An account has a margin mode, isolated as all were. A paper
 * position is charged funding through `funded_until`, each payment one row of `account_funding`, and
 * a trailing stop keeps its distance and the best price seen (`trail_best`). A limit or stop entry
 * is an order `open` until the mark reaches its `entry_price`, or `cancelled` by the next decision.
 */
export default script(`
  ALTER TABLE backtests ADD COLUMN maker_fee_rate double precision;
  UPDATE backtests SET maker_fee_rate = fee_rate;
  ALTER TABLE backtests ALTER COLUMN maker_fee_rate SET NOT NULL;
  ALTER TABLE backtests ADD COLUMN slippage_model text NOT NULL DEFAULT 'fixed';
  ALTER TABLE backtests ADD COLUMN fill_timing text NOT NULL DEFAULT 'close';
  ALTER TABLE backtests ADD COLUMN margin_mode text NOT NULL DEFAULT 'isolated';
  ALTER TABLE accounts ADD COLUMN margin_mode text NOT NULL DEFAULT 'isolated';
  ALTER TABLE account_positions ADD COLUMN funded_until timestamptz;
  ALTER TABLE account_positions ADD COLUMN trailing_stop double precision;
  ALTER TABLE account_positions ADD COLUMN trail_best numeric;
  ALTER TABLE automation_orders ADD COLUMN trailing_stop double precision;
  ALTER TABLE automation_orders ADD COLUMN order_type text NOT NULL DEFAULT 'market';
  ALTER TABLE automation_orders ADD COLUMN entry_price numeric;
  ALTER TABLE automation_orders ADD COLUMN time_in_force text;
  CREATE INDEX automation_orders_open ON automation_orders (id) WHERE status = 'open';
  CREATE TABLE account_funding (
    account_id integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    symbol text NOT NULL,
    funding_time timestamptz NOT NULL,
    side text NOT NULL,
    size numeric NOT NULL,
    mark_price numeric NOT NULL,
    rate double precision NOT NULL,
    amount numeric NOT NULL,
    PRIMARY KEY (account_id, symbol, funding_time)
  );
`)
