import { script } from "../SqlScript.js"

/** The bars a backtest feeds its program before `start` without trading; those that ran before had none. */
export default script(`
  ALTER TABLE backtests ADD COLUMN warmup_bars integer NOT NULL DEFAULT 0;
`)
