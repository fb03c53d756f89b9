import { script } from "../SqlScript.js"

// Deleting a user cascades to their signals and their pools in one statement; a pool's member rows
// then go with the pool, but the signal's own check ran first and refused. Checked at commit
// instead, the rule stays (no member names a missing signal) and the cascade goes through.
export default script(`
  ALTER TABLE signal_pool_members
    DROP CONSTRAINT signal_pool_members_signal_id_fkey,
    ADD CONSTRAINT signal_pool_members_signal_id_fkey
      FOREIGN KEY (signal_id) REFERENCES signals (id) DEFERRABLE INITIALLY DEFERRED;
`)
