import { script } from "../SqlScript.js"

/**
 * What a job claim reads of each owner with jobs waiting (see `JobQueue.claim`): how many of their
 * jobs run, and when their last one started. Without these, each claim counted over the owner's
 * whole history once per waiting job, so a claim's cost grew with the queue times the history (a
 * search's trials are hundreds of jobs of one owner). With them, both are index lookups per owner.
 */
export default script(`
  CREATE INDEX backtests_running_by_user ON backtests (user_id) WHERE status = 'running';
  CREATE INDEX backtests_started_by_user ON backtests (user_id, started_at);
  CREATE INDEX automation_runs_running_by_user ON automation_runs (user_id) WHERE status = 'running';
  CREATE INDEX automation_runs_started_by_user ON automation_runs (user_id, started_at);
  CREATE INDEX ai_insights_running_by_user ON ai_insights (user_id) WHERE status = 'running';
  CREATE INDEX ai_insights_started_by_user ON ai_insights (user_id, started_at);
  CREATE INDEX candle_syncs_running_by_user ON candle_syncs (user_id) WHERE status = 'running';
  CREATE INDEX candle_syncs_started_by_user ON candle_syncs (user_id, started_at);
  CREATE INDEX ai_decision_rounds_running_by_user ON ai_decision_rounds (user_id) WHERE status = 'running';
  CREATE INDEX ai_decision_rounds_started_by_user ON ai_decision_rounds (user_id, started_at);
  CREATE INDEX ai_backtests_running_by_user ON ai_backtests (user_id) WHERE status = 'running';
  CREATE INDEX ai_backtests_started_by_user ON ai_backtests (user_id, started_at);
  CREATE INDEX optimizations_running_by_user ON optimizations (user_id) WHERE status = 'running';
  CREATE INDEX optimizations_started_by_user ON optimizations (user_id, started_at);
  CREATE INDEX optimization_trials_running_by_user ON optimization_trials (user_id) WHERE status = 'running';
  CREATE INDEX optimization_trials_started_by_user ON optimization_trials (user_id, started_at);
`)
