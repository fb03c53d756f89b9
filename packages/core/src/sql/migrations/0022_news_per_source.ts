import { script } from "../SqlScript.js"

// A story is de-duplicated within its feed, not across feeds: one feed naming another's links no
// longer keeps those stories from the other feed's readers.
export default script(`
  ALTER TABLE news_items DROP CONSTRAINT news_items_link_key;
  ALTER TABLE news_items ADD CONSTRAINT news_items_feed_link UNIQUE (feed_url, link);
  CREATE INDEX news_items_by_link ON news_items (link, id);
`)
