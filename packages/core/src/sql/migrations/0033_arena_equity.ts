import { script } from "../SqlScript.js"

/**
 * The arena's equity history (issue 34 point 6): each hour of each account, the equity the PnL
 * refresher measured first (`open`), highest, lowest and last (`close`). An hour a row keeps the
 * history small enough to hold for as long as the account lives, and fine enough for a
 * leaderboard's drawdown and Sharpe.
 */
export default script(`
  CREATE TABLE arena_equity (
    account_id integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    hour timestamptz NOT NULL,
    open numeric NOT NULL,
    high numeric NOT NULL,
    low numeric NOT NULL,
    close numeric NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (account_id, hour)
  );
`)
