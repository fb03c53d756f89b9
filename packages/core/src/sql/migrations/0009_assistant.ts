import { script } from "../SqlScript.js"

// ai_usage outlives deleted conversations, so deleting one does not reset the hourly limits.
export default script(`
  CREATE TABLE ai_conversations (
    id serial PRIMARY KEY,
    user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    title text NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  );
  CREATE INDEX ai_conversations_by_user ON ai_conversations (user_id, updated_at DESC, id DESC);
  CREATE TABLE ai_messages (
    id serial PRIMARY KEY,
    conversation_id integer NOT NULL REFERENCES ai_conversations (id) ON DELETE CASCADE,
    role text NOT NULL,
    content text NOT NULL,
    tool_calls text NOT NULL,
    prompt_tokens integer,
    completion_tokens integer,
    created_at timestamptz NOT NULL
  );
  CREATE INDEX ai_messages_by_conversation ON ai_messages (conversation_id, id);
  CREATE TABLE ai_usage (
    id serial PRIMARY KEY,
    user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind text NOT NULL,
    created_at timestamptz NOT NULL
  );
  CREATE INDEX ai_usage_by_user ON ai_usage (user_id, kind, created_at);
`)
