import { type BacktestJobOptions, PlatformConfig, PlatformLive, type StorageConfig } from "@trading-platform/core"
import { type Context, Duration, Effect, Layer, Scope } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { testOptions, type TestStorage } from "./TestStorage.js"

/** One platform instance (its own services and job workers) on the storage, until the scope closes. */
export const startInstance = (
  storage: StorageConfig,
  scope: Scope.Scope,
  backtests: Partial<BacktestJobOptions> = {}
) =>
  Layer.buildWithScope(
    PlatformLive.pipe(
      Layer.provideMerge(PlatformConfig.layer(testOptions(storage, {
        backtests: {
          concurrency: 1,
          pollInterval: Duration.millis(20),
          lease: Duration.seconds(30),
          maxAttempts: 3,
          ...backtests
        }
      })))
    ),
    scope
  )

export type Instance = Effect.Effect.Success<ReturnType<typeof startInstance>>

/** Runs `effect` on the instance's services. */
export const on = <A, E>(instance: Instance, effect: Effect.Effect<A, E, any>) =>
  Effect.provide(effect, instance as Context.Context<any>)

/** Runs `f` in a scope of its own, closed when it ends: an instance started in it stops then, as a crashed one would. */
export const withScope = <A, E>(f: (scope: Scope.Scope) => Effect.Effect<A, E>) =>
  Effect.acquireUseRelease(Scope.make(), f, (scope, exit) => Scope.close(scope, exit))

/**
 * The storage as one that outlives an instance: PGlite in a data directory of its own (removed
 * with the test's scope) rather than in memory; PostgreSQL as it is.
 */
export const durableStorage = (storage: TestStorage, prefix: string) =>
  storage.name === "pglite"
    ? Effect.acquireRelease(
      Effect.sync((): StorageConfig => ({ kind: "pglite", dataDir: mkdtempSync(join(tmpdir(), prefix)) })),
      (s) => Effect.sync(() => s.kind === "pglite" && rmSync(s.dataDir, { recursive: true, force: true }))
    )
    : storage.storage
