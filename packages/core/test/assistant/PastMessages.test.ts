import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, layer } from "@effect/vitest"
import { PlatformLive } from "@trading-platform/core"
import { Effect, Layer } from "effect"
import { ConversationsRepo } from "../../src/assistant/ConversationsRepo.js"
import { TestConfig, testStorages } from "../support/TestStorage.js"

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`a conversation's past messages over ${storage.name}`, () => {
    layer(PlatformLive.pipe(Layer.provideMerge(TestConfig(storage))), { timeout: "120 seconds" })((it) => {
      it.effect("are the latest, oldest first, with role and content only: not the tool calls' results", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const now = new Date()
          const [user] = yield* sql<{ id: number }>`
            INSERT INTO users (email, username, password_hash, created_at, updated_at)
            VALUES ('past@example.com', 'past', 'x', ${now}, ${now}) RETURNING id`
          const [conversation] = yield* sql<{ id: number }>`
            INSERT INTO ai_conversations (user_id, title, created_at, updated_at)
            VALUES (${user!.id}, 'past', ${now}, ${now}) RETURNING id`
          // A tool's result can be a whole backtest.
          const toolCalls = JSON.stringify([{
            name: "get_backtest",
            arguments: {},
            result: { curve: "x".repeat(50_000) }
          }])
          for (let i = 0; i < 5; i++) {
            yield* sql`INSERT INTO ai_messages (conversation_id, role, content, tool_calls, created_at)
              VALUES (${conversation!.id}, ${
              i % 2 === 0 ? "user" : "assistant"
            }, ${`message ${i}`}, ${toolCalls}, ${now})`
          }
          const past = yield* Effect.flatMap(
            ConversationsRepo,
            (repo) => repo.recentMessages({ conversation_id: conversation!.id as any, limit: 3 })
          )
          expect(past.map(({ id: _, ...m }) => m)).toEqual([
            { role: "user", content: "message 2" },
            { role: "assistant", content: "message 3" },
            { role: "user", content: "message 4" }
          ])
        }))
    })
  })
}
