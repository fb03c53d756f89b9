import * as SqlClient from "@effect/sql/SqlClient"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer } from "effect"
import { mkdirSync } from "node:fs"
import { PlatformConfig, type StorageConfig } from "../config/PlatformConfig.js"
import type { StorageKind } from "../system/Health.js"
import { migrate } from "./Migrations.js"
import * as PgliteClient from "./PgliteClient.js"

/** Which storage is in use (reported by the health check). */
export class Storage extends Context.Tag("@trading-platform/core/Storage")<Storage, { readonly kind: StorageKind }>() {}

const client = (storage: StorageConfig) => {
  if (storage.kind === "postgres") return PgClient.layer({ url: storage.url })
  const memory = storage.dataDir.startsWith("memory://")
  if (!memory) mkdirSync(storage.dataDir, { recursive: true })
  return PgliteClient.layer(memory ? undefined : storage.dataDir)
}

/** The SqlClient the configuration asks for, migrated to the current schema. */
export const DatabaseLive = Layer.unwrapEffect(
  Effect.map(PlatformConfig, ({ storage }) =>
    Layer.effectContext(
      Effect.zipRight(migrate, Effect.map(SqlClient.SqlClient, (sql) =>
        Context.make(SqlClient.SqlClient, sql).pipe(Context.add(Storage, { kind: storage.kind }))))
    ).pipe(Layer.provide(client(storage)))
  )
)
