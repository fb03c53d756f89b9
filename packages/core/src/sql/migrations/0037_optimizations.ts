import { script } from "../SqlScript.js"

/**
 * Optimisations (issue 35 points 2 and 3): one job row per search, with the program's code, the
 * resolved request and searched space as JSON; and one job row per trial, claimed by the trial
 * workers of any replica. A trial's metrics are copied to columns beside its result, so trials
 * list and sort without decoding results. `(optimization_id, fold, role, trial)` is unique: a
 * coordinator that resumes after a crash inserts the trials it plans again without running any twice.
 */
export default script(`
  CREATE TABLE optimizations (
    id serial PRIMARY KEY,
    user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    program_id integer REFERENCES programs (id) ON DELETE SET NULL,
    code text NOT NULL,
    request text NOT NULL,
    space text NOT NULL,
    params text NOT NULL,
    trials_total integer NOT NULL,
    status text NOT NULL,
    progress double precision NOT NULL DEFAULT 0,
    attempts integer NOT NULL DEFAULT 0,
    lease_until timestamptz,
    claimed_by text,
    error text,
    result text,
    created_at timestamptz NOT NULL,
    started_at timestamptz,
    finished_at timestamptz
  );
  CREATE INDEX optimizations_by_program ON optimizations (program_id, created_at DESC, id DESC);
  CREATE INDEX optimizations_claimable ON optimizations (id) WHERE status IN ('queued', 'running');

  CREATE TABLE optimization_trials (
    id serial PRIMARY KEY,
    user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    optimization_id integer NOT NULL REFERENCES optimizations (id) ON DELETE CASCADE,
    trial integer NOT NULL,
    fold integer NOT NULL,
    role text NOT NULL,
    params text NOT NULL,
    start_at timestamptz NOT NULL,
    end_at timestamptz NOT NULL,
    status text NOT NULL,
    progress double precision NOT NULL DEFAULT 0,
    attempts integer NOT NULL DEFAULT 0,
    lease_until timestamptz,
    claimed_by text,
    error text,
    result text,
    objective double precision,
    rejected text,
    sharpe double precision,
    sortino double precision,
    calmar double precision,
    total_return double precision,
    profit_factor double precision,
    max_drawdown_percent double precision,
    total_trades integer,
    win_rate double precision,
    created_at timestamptz NOT NULL,
    started_at timestamptz,
    finished_at timestamptz,
    UNIQUE (optimization_id, fold, role, trial)
  );
  CREATE INDEX optimization_trials_claimable ON optimization_trials (id) WHERE status IN ('queued', 'running');
`)
