import { HttpApiBuilder } from "@effect/platform"
import * as SqlClient from "@effect/sql/SqlClient"
import { Health, Storage, TradingApi, Unavailable } from "@trading-platform/core"
import { Effect } from "effect"
import { version } from "../Version.js"

export const HealthHttpLive = HttpApiBuilder.group(TradingApi, "health", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const storage = yield* Storage
    const healthy = new Health({ status: "ok", version, storage: storage.kind })
    return handlers.handle("health", () =>
      sql`SELECT 1`.pipe(
        Effect.timeout("2 seconds"),
        Effect.as(healthy),
        Effect.catchAll(() => Effect.fail(new Unavailable({ error: "Storage is not answering" })))
      ))
  }))
