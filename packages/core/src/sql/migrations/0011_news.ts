import { script } from "../SqlScript.js"

// Items are shared by every source with the same feed URL and de-duplicated by link.
export default script(`
  CREATE TABLE news_sources (
    id serial PRIMARY KEY,
    user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name text NOT NULL,
    url text NOT NULL,
    enabled boolean NOT NULL,
    last_fetched_at timestamptz,
    last_error text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  );
  CREATE INDEX news_sources_by_user ON news_sources (user_id, id);
  CREATE INDEX news_sources_enabled ON news_sources (url) WHERE enabled;
  CREATE TABLE news_seeded (
    user_id integer PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE
  );
  CREATE TABLE news_items (
    id serial PRIMARY KEY,
    feed_url text NOT NULL,
    link text NOT NULL UNIQUE,
    title text NOT NULL,
    summary text,
    published_at timestamptz,
    symbols text NOT NULL,
    fetched_at timestamptz NOT NULL
  );
  CREATE INDEX news_items_by_feed ON news_items (feed_url, id DESC);
`)
