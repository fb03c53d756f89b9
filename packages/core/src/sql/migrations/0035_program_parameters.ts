import { script } from "../SqlScript.js"

/**
 * Parameters (issue 35 point 1): a program's declaration, as JSON (its `parameters` export checked
 * when it is saved; null when it declares none, and for programs saved before this migration until
 * they are saved again), and the `params` a backtest ran with, completed with the defaults.
 */
export default script(`
  ALTER TABLE programs ADD COLUMN parameters text;
  ALTER TABLE backtests ADD COLUMN params text NOT NULL DEFAULT '{}';
`)
