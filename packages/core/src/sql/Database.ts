import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Effect, Layer } from "effect"
import { PlatformConfig, type StorageConfig } from "../config/PlatformConfig.js"
import { acquireDataDirectory } from "./DataDirectory.js"
import * as MigratedTemplate from "./MigratedTemplate.js"
import { migrate, migrateAlone } from "./Migrations.js"
import { Notifications } from "./Notifications.js"
import * as PgliteClient from "./PgliteClient.js"
import type { StorageKind } from "./StorageKind.js"

/** Which storage is in use (reported by the health check). */
export class Storage extends Context.Tag("@trading-platform/core/Storage")<Storage, { readonly kind: StorageKind }>() {}

const client = (storage: StorageConfig) => {
  // Loaded only for PostgreSQL: node-postgres need not load where PGlite is the storage.
  if (storage.kind === "postgres") {
    return Layer.unwrapEffect(
      Effect.map(
        Effect.promise(() => Promise.all([import("@effect/sql-pg"), import("./PgNotifications.js")])),
        ([{ PgClient }, PgNotifications]) =>
          Layer.merge(PgClient.layer({ url: storage.url }), PgNotifications.layer(storage.url))
      )
    )
  }
  // In memory: from the migrated template, so a one-off process or a test does not create and migrate a database.
  return storage.dataDir.startsWith("memory://") ? MigratedTemplate.layerMemory() : PgliteClient.layer(storage.dataDir)
}

const migrated = (storage: StorageConfig) =>
  Layer.effectContext(
    Effect.zipRight(
      // Embedded storage is one process's (its folder is locked); PostgreSQL may be several replicas'.
      storage.kind === "postgres" ? migrateAlone : migrate,
      Effect.map(
        Effect.all([SqlClient.SqlClient, Notifications]),
        ([sql, notifications]) =>
          Context.make(SqlClient.SqlClient, sql).pipe(
            Context.add(Notifications, notifications),
            Context.add(Storage, { kind: storage.kind })
          )
      )
    )
  ).pipe(Layer.provide(client(storage)))

/** The SqlClient the configuration asks for, migrated to the current schema, with its `Notifications`. */
export const DatabaseLive = Layer.unwrapEffect(
  Effect.map(PlatformConfig, ({ storage }) =>
    storage.kind === "pglite" && !storage.dataDir.startsWith("memory://")
      // The folder is held (locked, owner-only) from before the database opens until after it closes.
      ? Layer.unwrapScoped(
        Effect.map(acquireDataDirectory(storage.dataDir), (dir) => Layer.tap(migrated(storage), () => dir.restrict))
      )
      : migrated(storage))
)
