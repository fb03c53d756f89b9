import { script } from "../SqlScript.js"

/**
 * The jobs a claim can take, by owner (see `JobQueue.claim`): a claim ranks the owners with jobs
 * waiting, then reads the waiting jobs of each. The index on `id` alone found the owners, but
 * their jobs were then read through `(user_id, started_at)`, every job the owner ever had, finished
 * or not, filtered to the waiting ones: a claim's cost grew with the owner's history (each trial of
 * a search is a job). This index serves both reads and holds only the jobs not finished.
 */
export default script(`
  DROP INDEX backtests_claimable;
  CREATE INDEX backtests_claimable ON backtests (user_id, id) WHERE status IN ('queued', 'running');
  DROP INDEX automation_runs_claimable;
  CREATE INDEX automation_runs_claimable ON automation_runs (user_id, id) WHERE status IN ('queued', 'running');
  DROP INDEX ai_insights_claimable;
  CREATE INDEX ai_insights_claimable ON ai_insights (user_id, id) WHERE status IN ('queued', 'running');
  DROP INDEX candle_syncs_claimable;
  CREATE INDEX candle_syncs_claimable ON candle_syncs (user_id, id) WHERE status IN ('queued', 'running');
  DROP INDEX ai_decision_rounds_claimable;
  CREATE INDEX ai_decision_rounds_claimable ON ai_decision_rounds (user_id, id) WHERE status IN ('queued', 'running');
  DROP INDEX ai_backtests_claimable;
  CREATE INDEX ai_backtests_claimable ON ai_backtests (user_id, id) WHERE status IN ('queued', 'running');
  DROP INDEX optimizations_claimable;
  CREATE INDEX optimizations_claimable ON optimizations (user_id, id) WHERE status IN ('queued', 'running');
  DROP INDEX optimization_trials_claimable;
  CREATE INDEX optimization_trials_claimable ON optimization_trials (user_id, id) WHERE status IN ('queued', 'running');
`)
