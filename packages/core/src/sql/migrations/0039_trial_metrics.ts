import { script } from "../SqlScript.js"

/**
 * A trial's metrics in a column of their own, written with its result: a running optimisation's
 * best so far (in its view, polled by each watcher) showed its best trial's metrics by parsing
 * that trial's whole stored result (trades, fills and curve) in SQL on every read.
 */
export default script(`
  ALTER TABLE optimization_trials ADD COLUMN metrics text;
  UPDATE optimization_trials SET metrics = (result::json) -> 'outcome' ->> 'metrics' WHERE result IS NOT NULL;
`)
