import { script } from "../SqlScript.js"

/**
 * Live automation, continued (migration 0013):
 * - a trade of a fill is keyed by its order, so two fills of one account, symbol and side in the
 *   same millisecond are two trades; imported trades (no order) keep their natural key;
 * - a position keeps the take-profit and stop-loss prices of the decision that opened it;
 * - an order says what placed it (a run, or a position's take profit or stop loss) and carries the
 *   take profit and stop loss it leaves on its position; its key (sent to the venue as the client
 *   order id) makes one order per run and one close per position and trigger, whichever replica saw it.
 */
export default script(`
  ALTER TABLE account_trades ADD COLUMN order_id integer UNIQUE;
  ALTER TABLE account_trades DROP CONSTRAINT account_trades_account_id_trade_time_symbol_side_key;
  CREATE UNIQUE INDEX account_trades_imported ON account_trades (account_id, trade_time, symbol, side)
    WHERE order_id IS NULL;

  ALTER TABLE account_positions ADD COLUMN take_profit_price numeric;
  ALTER TABLE account_positions ADD COLUMN stop_loss_price numeric;
  CREATE INDEX account_positions_watched ON account_positions (account_id)
    WHERE take_profit_price IS NOT NULL OR stop_loss_price IS NOT NULL;

  ALTER TABLE automation_orders ADD COLUMN trigger text NOT NULL DEFAULT 'run';
  ALTER TABLE automation_orders ADD COLUMN idempotency_key text UNIQUE;
  ALTER TABLE automation_orders ADD COLUMN take_profit_price numeric;
  ALTER TABLE automation_orders ADD COLUMN stop_loss_price numeric;
  CREATE INDEX automation_orders_open_closes ON automation_orders (id)
    WHERE trigger <> 'run' AND status IN ('pending', 'submitted');
`)
