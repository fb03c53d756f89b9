import { script } from "../SqlScript.js"

/**
 * A take-profit or stop-loss exit keeps the mark that triggered it: the order fills later at the
 * venue's price then (a market order slips past its level in a fast market), and both are worth seeing.
 */
export default script(`
  ALTER TABLE automation_orders ADD COLUMN trigger_price numeric;
`)
