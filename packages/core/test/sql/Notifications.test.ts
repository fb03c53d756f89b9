import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it, layer } from "@effect/vitest"
import { DatabaseLive } from "@trading-platform/core"
import { Chunk, Deferred, Effect, Exit, Layer, Queue, Redacted, Schedule, Stream } from "effect"
import { createServer } from "node:net"
import { Notifications } from "../../src/sql/Notifications.js"
import * as PgNotifications from "../../src/sql/PgNotifications.js"
import { TestConfig, testStorages } from "../support/TestStorage.js"

/** Sends `payload` to `channel` every 20 ms until `until` answers: a listener has started once it hears one. */
const sendUntil = <A, E, R>(channel: string, payload: string, until: Effect.Effect<A, E, R>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.raceFirst(
      until,
      Effect.zipRight(
        sql`SELECT pg_notify(${channel}, ${payload})`.pipe(Effect.repeat(Schedule.spaced("20 millis"))),
        Effect.never
      )
    )).pipe(Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => `${channel} never heard ${payload}` }))

/** The first payload a new stream of `channel` hears, sending `payload` until it does. */
const firstHeard = (listen: Notifications["Type"]["listen"], channel: string, payload: string) =>
  sendUntil(channel, payload, Effect.map(Stream.runCollect(Stream.take(listen(channel), 1)), Chunk.toArray))

/** The next payload `queue` takes that is `payload`, passing over others (pings still in flight). */
const takeOnly = (queue: Queue.Queue<string>, payload: string): Effect.Effect<string> =>
  Effect.flatMap(Queue.take(queue), (p) => p === payload ? Effect.succeed(p) : takeOnly(queue, payload))

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`notifications over ${storage.name}`, () => {
    layer(DatabaseLive.pipe(Layer.provideMerge(TestConfig(storage))), {
      timeout: "60 seconds",
      excludeTestServices: true
    })((it) => {
      it.scoped("a channel's streams each hear it, and one ending leaves the others listening", () =>
        Effect.gen(function*() {
          const { listen } = yield* Notifications
          const sql = yield* SqlClient.SqlClient
          const kept = yield* Queue.unbounded<string>()
          yield* Effect.forkScoped(Stream.runForEach(listen("shared"), (p) => Queue.offer(kept, p)))
          yield* sendUntil("shared", "ready", takeOnly(kept, "ready"))
          // A second stream of the channel hears it too, then ends.
          expect(yield* firstHeard(listen, "shared", "other")).toEqual(["other"])
          yield* sql`SELECT pg_notify('shared', 'after')`
          expect(
            yield* Effect.timeoutFail(takeOnly(kept, "after"), {
              duration: "10 seconds",
              onTimeout: () => "the stream held open stopped hearing its channel when the other ended"
            })
          ).toBe("after")
        }))

      it.scoped("channels listened to at once each hear their own, one statement at a time on the connection", () =>
        Effect.gen(function*() {
          const { listen } = yield* Notifications
          const warnings: Array<string> = []
          const onWarning = (warning: Error) => warnings.push(warning.message)
          process.on("warning", onWarning)
          yield* Effect.addFinalizer(() => Effect.sync(() => process.off("warning", onWarning)))
          const channels = ["a", "b", "c", "d", "e"].map((c) => `many_${c}`)
          const heard = yield* Effect.forEach(channels, (c) => firstHeard(listen, c, c), { concurrency: "unbounded" })
          expect(heard).toEqual(channels.map((c) => [c]))
          yield* Effect.sleep("50 millis") // a warning is emitted on a later tick
          expect(warnings.filter((w) => w.includes("already executing a query"))).toEqual([])
        }))

      it.scoped.skipIf(storage.name !== "postgres")(
        "a listening connection that drops fails its streams, and listening again hears what is sent after",
        () =>
          Effect.gen(function*() {
            const { listen } = yield* Notifications
            const sql = yield* SqlClient.SqlClient
            const heard = yield* Queue.unbounded<string>()
            const failed = yield* Deferred.make<void>()
            // Listening again when the stream fails, as the platform's listeners do.
            yield* listen("dropped").pipe(
              Stream.runForEach((p) => Queue.offer(heard, p)),
              Effect.tapError(() => Deferred.succeed(failed, undefined)),
              Effect.retry(Schedule.spaced("50 millis")),
              Effect.forkScoped
            )
            yield* sendUntil("dropped", "before", takeOnly(heard, "before"))
            const ended = yield* sql<{ pid: number }>`
              SELECT pg_terminate_backend(pid) FROM pg_stat_activity
              WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN %'`
            expect(ended.length).toBe(1)
            yield* Effect.timeoutFail(Deferred.await(failed), {
              duration: "10 seconds",
              onTimeout: () => "the stream went on as if nothing happened, hearing nothing"
            })
            yield* sendUntil("dropped", "after", takeOnly(heard, "after"))
          })
      )
    })
  })
}

describe("notifications over PostgreSQL, a server that does not answer", () => {
  it.live("fails the listen, which its owner then tries again, rather than holding it", () =>
    Effect.gen(function*() {
      // Accepts the connection and never says a word.
      const silent = yield* Effect.acquireRelease(
        Effect.async<ReturnType<typeof createServer>>((resume) => {
          const server = createServer(() => undefined).listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
        }),
        (server) => Effect.sync(() => server.close())
      )
      const { port } = silent.address() as { port: number }
      const url = Redacted.make(`postgres://postgres@127.0.0.1:${port}/test`)
      const listened = yield* Effect.flatMap(Notifications, ({ listen }) => Stream.runDrain(listen("silent"))).pipe(
        Effect.provide(PgNotifications.layer(url)),
        Effect.timeoutFail({ duration: "30 seconds", onTimeout: () => "still waiting for the server" }),
        Effect.exit
      )
      expect(Exit.isFailure(listened) && JSON.stringify(listened.cause)).toContain("SqlError")
    }).pipe(Effect.scoped), { timeout: 60_000 })
})
