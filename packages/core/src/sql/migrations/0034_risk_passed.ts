import { script } from "../SqlScript.js"

/**
 * When the risk firewall let an order through. Checks of one account are serialised (its risk row
 * is locked) but fills are not: an order passed and not yet filled counts as filled in the next
 * check, so orders checked at once pass the limits as they would one by one.
 */
export default script(`
  ALTER TABLE automation_orders ADD COLUMN risk_passed_at timestamptz;
  CREATE INDEX automation_orders_in_flight ON automation_orders (account_id)
    WHERE risk_passed_at IS NOT NULL AND status IN ('pending', 'submitted', 'open');
`)
