import { script } from "../SqlScript.js"

/** Secrets are stored sealed (AES-256-GCM) in *_sealed columns, never in plain text. */
export default script(`
  CREATE TABLE accounts (
    id serial PRIMARY KEY,
    user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name text NOT NULL,
    account_type text NOT NULL,
    initial_capital numeric NOT NULL,
    current_cash numeric NOT NULL,
    frozen_cash numeric NOT NULL,
    is_active boolean NOT NULL,
    show_on_dashboard boolean NOT NULL,
    venue1_enabled boolean NOT NULL,
    avatar_preset_id integer,
    base_url text,
    model text,
    default_leverage integer,
    max_leverage integer,
    venue1_environment text,
    api_key_sealed text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  );
  CREATE INDEX accounts_by_user ON accounts (user_id, id);
`)
