import { script } from "../SqlScript.js"

/**
 * Wakes the schedulers (`JobWakeup`) at commit when they may have something new to do. The
 * automation scheduler (kind `automation_watch`): a position opened, an order resting or waiting to
 * settle, a binding created or changed. The AI traders' scheduler (`ai_trader_schedule`): an AI
 * trader enabled or its interval changed. An idle scheduler sleeps until then (or its next slot,
 * or its fallback poll). Row triggers, not statement ones: a statement trigger fires for an
 * `INSERT … ON CONFLICT DO NOTHING` that inserts nothing (the watcher's own check for an exit),
 * which would wake it after every pass.
 */
export default script(`
  CREATE FUNCTION job_wakeup_notify() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM pg_notify('job_wakeup', TG_ARGV[0]);
    RETURN NULL;
  END
  $$;
  CREATE TRIGGER account_positions_watch AFTER INSERT ON account_positions
    FOR EACH ROW EXECUTE FUNCTION job_wakeup_notify('automation_watch');
  CREATE TRIGGER automation_orders_watch AFTER INSERT OR UPDATE OF status ON automation_orders
    FOR EACH ROW WHEN (NEW.status IN ('open', 'pending', 'submitted')) EXECUTE FUNCTION job_wakeup_notify('automation_watch');
  CREATE TRIGGER automation_bindings_watch AFTER INSERT OR UPDATE OF enabled, interval_minutes ON automation_bindings
    FOR EACH ROW WHEN (NEW.enabled) EXECUTE FUNCTION job_wakeup_notify('automation_watch');
  CREATE TRIGGER ai_traders_schedule AFTER INSERT OR UPDATE OF enabled, interval_minutes ON ai_traders
    FOR EACH ROW WHEN (NEW.enabled) EXECUTE FUNCTION job_wakeup_notify('ai_trader_schedule');
`)
