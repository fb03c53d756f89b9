import { SqlError } from "@effect/sql/SqlError"
import { Effect, Layer, Redacted, Stream, type StreamEmit } from "effect"
import * as Pg from "pg"
import { Notifications } from "./Notifications.js"

type Listener = StreamEmit.EmitOpsPush<SqlError, string>

/**
 * `Notifications` on PostgreSQL: one connection of the process's own listens to every channel a
 * stream wants. `@effect/sql-pg`'s `listen` is not used: it sends its `LISTEN`s at once on one
 * client (`pg` warns it will refuse that), `UNLISTEN`s a channel when any one of its streams ends
 * (the others then hear nothing), and keeps a connection that dropped (its streams wait forever).
 * Here statements take their turn, a channel is listened to while some stream wants it, and a
 * dropped connection fails every stream, whose owners listen again, on a new connection.
 */
export const layer = (url: Redacted.Redacted): Layer.Layer<Notifications> =>
  Layer.scoped(
    Notifications,
    Effect.gen(function*() {
      const turn = yield* Effect.makeSemaphore(1)
      const channels = new Map<string, Set<Listener>>()
      let client: Pg.Client | undefined

      const drop = (lost: Pg.Client, cause: unknown) => {
        if (client !== lost) return
        client = undefined
        const error = new SqlError({ cause, message: "The connection listening for notifications was lost" })
        for (const listeners of channels.values()) for (const listener of listeners) listener.fail(error)
        channels.clear()
        lost.end().catch(() => undefined)
      }
      const connect = Effect.tryPromise({
        try: async () => {
          const opened = new Pg.Client({
            connectionString: Redacted.value(url),
            application_name: "trading-platform notifications",
            // A server that does not answer fails the listen (its owner tries again) rather than holding it.
            connectionTimeoutMillis: 5_000,
            // The connection idles between notifications: TCP keepalive finds a peer gone without a word.
            keepAlive: true,
            keepAliveInitialDelayMillis: 60_000
          })
          opened.on("error", (e) => drop(opened, e))
          opened.on("end", () => drop(opened, "the connection ended"))
          opened.on("notification", ({ channel, payload }) => {
            if (payload === undefined) return
            for (const listener of channels.get(channel) ?? []) listener.single(payload)
          })
          await opened.connect()
          return opened
        },
        catch: (cause) => new SqlError({ cause, message: "Could not connect to listen for notifications" })
      })
      // LISTEN takes no parameters: the channel goes in quoted as an identifier.
      const run = (on: Pg.Client, statement: "LISTEN" | "UNLISTEN", channel: string) =>
        Effect.tryPromise({
          try: () => on.query(`${statement} ${Pg.escapeIdentifier(channel)}`),
          catch: (cause) => new SqlError({ cause, message: `${statement} ${channel} failed` })
        })
      /** Takes `listener` off `channel`; answers whether that was the channel's last. */
      const forget = (channel: string, listener: Listener) => {
        const listeners = channels.get(channel)
        if (!listeners?.delete(listener) || listeners.size > 0) return false
        channels.delete(channel)
        return true
      }

      yield* Effect.addFinalizer(() =>
        Effect.suspend(() => {
          const open = client
          client = undefined
          return open ? Effect.ignore(Effect.timeout(Effect.tryPromise(() => open.end()), "1 second")) : Effect.void
        })
      )

      const listen = (channel: string) =>
        Stream.asyncPush<string, SqlError>((listener) =>
          Effect.acquireRelease(
            turn.withPermits(1)(Effect.gen(function*() {
              const on = client ?? (client = yield* connect)
              const listeners = channels.get(channel)
              if (listeners) return void listeners.add(listener)
              channels.set(channel, new Set([listener]))
              yield* Effect.tapError(run(on, "LISTEN", channel), () => Effect.sync(() => forget(channel, listener)))
            })),
            () =>
              turn.withPermits(1)(
                Effect.suspend(() =>
                  forget(channel, listener) && client ? Effect.ignore(run(client, "UNLISTEN", channel)) : Effect.void
                )
              )
          )
        )

      return { listen }
    })
  )
