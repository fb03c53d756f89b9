import { script } from "../SqlScript.js"

/** The unique keys are trader import's duplicate rules: an imported row with the same key is skipped. */
export default script(`
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
`)
