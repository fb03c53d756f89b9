import { script } from "../SqlScript.js"

/**
 * A binding may run its program over all its symbols at once (`portfolio`): one run then decides
 * for every symbol and places an order per symbol, so an order is one per run and symbol. Earlier
 * runs decided for their one symbol. A binding's program may read longer timeframes, as a
 * backtest's.
 */
export default script(`
  ALTER TABLE automation_bindings ADD COLUMN portfolio boolean NOT NULL DEFAULT false;
  ALTER TABLE automation_bindings ADD COLUMN timeframes text NOT NULL DEFAULT '[]';
  ALTER TABLE automation_runs ADD COLUMN symbols text;
  UPDATE automation_runs SET symbols = json_build_array(symbol)::text;
  ALTER TABLE automation_runs ALTER COLUMN symbols SET NOT NULL;
  ALTER TABLE automation_orders DROP CONSTRAINT automation_orders_run_id_key;
  CREATE UNIQUE INDEX automation_orders_run_symbol ON automation_orders (run_id, symbol);
`)
