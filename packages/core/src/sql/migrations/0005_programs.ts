import { script } from "../SqlScript.js"

export default script(`
  CREATE TABLE programs (
    id serial PRIMARY KEY,
    user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name text NOT NULL,
    description text,
    language text NOT NULL,
    code text NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  );
  CREATE INDEX programs_by_user ON programs (user_id, created_at DESC);
`)
