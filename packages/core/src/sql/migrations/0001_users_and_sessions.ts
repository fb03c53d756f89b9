import { script } from "../SqlScript.js"

export default script(`
  CREATE TABLE users (
    id serial PRIMARY KEY,
    email text NOT NULL,
    username text NOT NULL,
    password_hash text NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  );
  CREATE UNIQUE INDEX users_email_key ON users (lower(email));
  CREATE UNIQUE INDEX users_username_key ON users (lower(username));
  CREATE TABLE sessions (
    id serial PRIMARY KEY,
    user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_hash text NOT NULL UNIQUE,
    user_agent text,
    created_at timestamptz NOT NULL,
    last_used_at timestamptz,
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz
  );
  CREATE INDEX sessions_active_by_user ON sessions (user_id, created_at DESC) WHERE revoked_at IS NULL;
`)
