import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, layer } from "@effect/vitest"
import { PlatformLive, platformOptions } from "@trading-platform/core"
import { Duration, Effect, Layer, Option, TestClock } from "effect"
import { TestConfig, testStorages } from "../support/TestStorage.js"

const retention = {
  ...platformOptions().retention,
  purgeInterval: Duration.hours(1),
  conversations: Option.some(Duration.days(1))
}
const at = (hours: number) => new Date(hours * 3_600_000)

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`conversation retention over ${storage.name}`, () => {
    layer(PlatformLive.pipe(Layer.provideMerge(TestConfig(storage, { retention }))), { timeout: "120 seconds" })(
      (it) => {
        it.effect("conversations untouched for longer than CONVERSATION_RETENTION_DAYS are purged with their messages; a recently continued one stays", () =>
          Effect.gen(function*() {
            const sql = yield* SqlClient.SqlClient
            const [user] = yield* sql<{ id: number }>`
              INSERT INTO users (email, username, password_hash, created_at, updated_at)
              VALUES ('c@example.com', 'talker', 'x', ${at(0)}, ${at(0)}) RETURNING id`
            const conversation = (title: string) =>
              Effect.map(
                sql<{ id: number }>`
                  INSERT INTO ai_conversations (user_id, title, created_at, updated_at)
                  VALUES (${user!.id}, ${title}, ${at(0)}, ${at(0)}) RETURNING id`,
                ([row]) => row!.id
              )
            // What ConversationsRepo.insertMessage does: the message touches its conversation.
            const say = (id: number, hours: number) =>
              sql`UPDATE ai_conversations SET updated_at = ${at(hours)} WHERE id = ${id}`.pipe(
                Effect.zipRight(sql`
                  INSERT INTO ai_messages (conversation_id, role, content, tool_calls, created_at)
                  VALUES (${id}, 'user', 'hi', '[]', ${at(hours)})`)
              )
            const old = yield* conversation("old")
            const continued = yield* conversation("continued")
            yield* say(old, 0)
            yield* say(continued, 0)
            yield* TestClock.adjust("20 hours")
            yield* say(continued, 20)
            yield* TestClock.adjust("11 hours")
            // The purge runs on its own fiber, which sleeps again only once its round's queries are
            // done: given real time, and stepped an hour (its next round) now and then. Ten hours
            // more stay short of the continued conversation's expiry.
            const titles = () => Effect.map(sql<{ title: string }>`SELECT title FROM ai_conversations`, (r) => r)
            for (let i = 0; i < 200 && (yield* titles()).length !== 1; i++) {
              if (i % 20 === 19) yield* TestClock.adjust("1 hour")
              yield* Effect.promise(() => new Promise((r) => setTimeout(r, 50)))
            }
            expect((yield* titles()).map((r) => r.title)).toEqual(["continued"])
            const messages = yield* sql<{ conversation_id: number }>`SELECT conversation_id FROM ai_messages`
            expect(messages.map((m) => m.conversation_id)).toEqual([continued, continued])
          }))
      }
    )
  })
}
