import { script } from "../SqlScript.js"

export default script(`
  CREATE TABLE venue_credentials (
    account_id integer NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    venue text NOT NULL,
    environment text NOT NULL,
    public_id text,
    secret_sealed text NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (account_id, venue)
  );
`)
