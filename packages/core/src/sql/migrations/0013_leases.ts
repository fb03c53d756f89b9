import { script } from "../SqlScript.js"

// One table for every lease of background work (the signal engine, the news fetcher, the
// automation scheduler, the PnL refresher, the purges), replacing the three that grew apart.
export default script(`
  CREATE TABLE leases (
    name text PRIMARY KEY,
    holder text NOT NULL,
    lease_until timestamptz NOT NULL,
    last_run_at timestamptz,
    last_error text
  );
  INSERT INTO leases (name, holder, lease_until, last_run_at, last_error)
    SELECT name, holder, lease_until, last_run_at, last_error FROM background_leases;
  INSERT INTO leases (name, holder, lease_until) SELECT name, holder, lease_until FROM engine_leases;
  INSERT INTO leases (name, holder, lease_until) SELECT name, '', next_run_at FROM periodic_tasks;
  DROP TABLE background_leases;
  DROP TABLE engine_leases;
  DROP TABLE periodic_tasks;
`)
