import { script } from "../SqlScript.js"

// One row per periodic task (e.g. the session purge): the round's claim, so one replica runs it.
export default script(`
  CREATE TABLE periodic_tasks (
    name text PRIMARY KEY,
    next_run_at timestamptz NOT NULL
  );
`)
