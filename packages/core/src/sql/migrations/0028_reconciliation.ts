import { script } from "../SqlScript.js"

/**
 * Live accounts are reconciled with their venues (automation/Reconciliation.ts): each difference
 * found is an event of the account. A position keeps the conditional orders protecting it at the
 * venue (its take profit and stop loss, `[{kind, key, order_id, price}]` as JSON), and says
 * whether the ledger adopted it from the venue. The leverage and margin mode set on the venue per
 * symbol are remembered, so they are set before a symbol's first order and again when they change.
 */
export default script(`
  CREATE TABLE reconciliation_events (
    id serial PRIMARY KEY,
    account_id integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    exchange text NOT NULL,
    kind text NOT NULL,
    symbol text,
    order_id integer,
    ledger_size numeric,
    venue_size numeric,
    message text NOT NULL,
    created_at timestamptz NOT NULL
  );
  CREATE INDEX reconciliation_events_account ON reconciliation_events (account_id, id DESC);
  ALTER TABLE account_positions ADD COLUMN venue_protection text;
  ALTER TABLE account_positions ADD COLUMN adopted boolean NOT NULL DEFAULT false;
  CREATE TABLE venue_symbol_settings (
    account_id integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    exchange text NOT NULL,
    symbol text NOT NULL,
    leverage integer NOT NULL,
    margin_mode text NOT NULL,
    PRIMARY KEY (account_id, exchange, symbol)
  );
`)
