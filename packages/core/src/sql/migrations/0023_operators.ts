import { script } from "../SqlScript.js"

/**
 * Operators: users who may read platform-wide figures (`GET /api/system/storage-stats`). Made so
 * by the command line (`trading-platform operator grant EMAIL`) or by `OPERATOR_EMAILS`; a row
 * goes with its user.
 */
export default script(`
  CREATE TABLE operators (
    user_id integer PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    granted_at timestamptz NOT NULL
  );
`)
