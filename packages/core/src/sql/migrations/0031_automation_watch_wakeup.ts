import { script } from "../SqlScript.js"

/**
 * Wakes the automation scheduler (`JobWakeup` kind `automation_watch`) at commit when it may have
 * something new to do: a position opened, an order resting or waiting to settle, a binding created
 * or changed. An idle scheduler sleeps until then (or its next slot, or its fallback poll). Row
 * triggers, not statement ones: a statement trigger fires for an `INSERT … ON CONFLICT DO NOTHING`
 * that inserts nothing (the watcher's own check for an exit), which would wake it after every pass.
 */
export default script(`
  CREATE FUNCTION automation_watch_wakeup() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM pg_notify('job_wakeup', 'automation_watch');
    RETURN NULL;
  END
  $$;
  CREATE TRIGGER account_positions_watch AFTER INSERT ON account_positions
    FOR EACH ROW EXECUTE FUNCTION automation_watch_wakeup();
  CREATE TRIGGER automation_orders_watch AFTER INSERT OR UPDATE OF status ON automation_orders
    FOR EACH ROW WHEN (NEW.status IN ('open', 'pending', 'submitted')) EXECUTE FUNCTION automation_watch_wakeup();
  CREATE TRIGGER automation_bindings_watch AFTER INSERT OR UPDATE OF enabled, interval_minutes ON automation_bindings
    FOR EACH ROW WHEN (NEW.enabled) EXECUTE FUNCTION automation_watch_wakeup();
`)
