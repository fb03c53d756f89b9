import { script } from "../SqlScript.js"

/**
 * Bias checks (issue 35 point 5): one row per check of a program, whose runs are ordinary backtests
 * (`runs`: their ids by role, as JSON; no foreign key, since finished backtests may be purged).
 * `code_hash` is the SHA-256 of the program's code when the check was asked, so a binding going
 * live can tell whether the check still speaks for the code. `verdict` is written once every run
 * has ended (null until then), so a check outlives its runs.
 */
export default script(`
  CREATE TABLE bias_checks (
    id serial PRIMARY KEY,
    user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    program_id integer NOT NULL REFERENCES programs (id) ON DELETE CASCADE,
    code_hash text NOT NULL,
    symbol text NOT NULL,
    exchange text NOT NULL,
    timeframe text NOT NULL,
    start_at timestamptz NOT NULL,
    end_at timestamptz NOT NULL,
    params text NOT NULL,
    warmup_bars integer NOT NULL,
    runs text NOT NULL,
    verdict text,
    created_at timestamptz NOT NULL
  );
  CREATE INDEX bias_checks_program ON bias_checks (program_id, created_at DESC);
`)
