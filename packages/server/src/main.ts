#!/usr/bin/env node
import { HttpServer } from "@effect/platform"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { describeConfigError, PgliteClient, PlatformConfig } from "@trading-platform/core"
import { ConfigProvider, Effect, Layer, Logger } from "effect"
import { resolve } from "node:path"
import { setFlagsFromString } from "node:v8"
import { parseArgs, usage } from "./CommandLine.js"
import { ConsoleLive } from "./console/ConsolePage.js"
import { DocsPageLive } from "./docs/DocsPage.js"
import { ServerLive } from "./Server.js"
import { serverConfig } from "./ServerConfig.js"
import { version } from "./Version.js"

// A request still running this long after SIGTERM does not keep the process alive.
const drainTimeoutMs = 15_000

const args = parseArgs(process.argv.slice(2))
if (args._tag === "Help") {
  console.log(usage)
  process.exit(0)
}
if (args._tag === "Version") {
  console.log(version)
  process.exit(0)
}
if (args._tag === "Invalid") {
  console.error(args.message)
  process.exit(2)
}

const provider = ConfigProvider.fromMap(args.values).pipe(ConfigProvider.orElse(() => ConfigProvider.fromEnv()))

/** Once listening: where the API, its reference and its data are, so a newcomer knows where to go. */
const startBanner = (consoleOn: boolean) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    const { storage } = yield* PlatformConfig
    const base = server.address._tag === "TcpAddress"
      ? `http://${
        server.address.hostname.includes(":") ? `[${server.address.hostname}]` : server.address.hostname
      }:${server.address.port}`
      : `unix:${server.address.path}`
    yield* Effect.log(
      `Trading Platform ${version}: API ${base}/api/, reference ${base}/docs${
        consoleOn ? `, console ${base}/console` : ""
      }`
    )
    yield* Effect.log(
      storage.kind === "postgres"
        ? "Data: PostgreSQL (DATABASE_URL)"
        : storage.dataDir.startsWith("memory://")
        ? "Data: in memory (DATA_DIR=memory://), gone when the server stops"
        : `Data directory: ${resolve(storage.dataDir)}`
    )
  }))

// PGlite's start without V8's optimising compiler on what runs only once (`PgliteClient.wasmTieringBudget`).
setFlagsFromString(`--wasm-tiering-budget=${PgliteClient.wasmTieringBudget.start}`)

/**
 * Once listening, V8 settings for a long-running server, in the reference server's process only
 * (an embedding host tunes its own): the WebAssembly tiering budget back to its default (above),
 * and a leaner heap. V8 grows the old generation up to fourfold past what survived its last
 * collection, and an idle server never collects again: after a burst of requests it kept ~120 MiB
 * of heap for ~40 MiB live (`docs/performance.md`). Growing by a fifth keeps it near the live
 * size, for a few percent of throughput under load; set only now, since the start would collect
 * more often too.
 */
const tuneOnceListening = Layer.effectDiscard(
  Effect.zipRight(
    HttpServer.HttpServer,
    Effect.sync(() => {
      setFlagsFromString(`--wasm-tiering-budget=${PgliteClient.wasmTieringBudget.default}`)
      setFlagsFromString("--heap-growing-percent=20")
    })
  )
)

const program = Effect.gen(function*() {
  const { console: consoleOn, host, logLevel, port } = yield* serverConfig
  return yield* Layer.launch(
    Layer.merge(startBanner(consoleOn), tuneOnceListening).pipe(
      Layer.provide(
        ServerLive({ port, host }).pipe(
          Layer.provide(DocsPageLive),
          Layer.provide(consoleOn ? ConsoleLive : Layer.empty)
        )
      ),
      Layer.provide(PlatformConfig.fromEnv)
    )
  ).pipe(
    Logger.withMinimumLogLevel(logLevel)
  )
}).pipe(
  Effect.withConfigProvider(provider),
  Effect.catchTags({
    ConfigError: (e) => Effect.sync(() => console.error(`Invalid configuration: ${describeConfigError(e)}`)),
    ServeError: (e) =>
      Effect.sync(() => console.error(`Cannot listen: ${String((e.cause as Error)?.message ?? e.cause)}`)),
    SqlError: (e) =>
      Effect.sync(() =>
        console.error(`Storage failed to start: ${e.message}: ${String((e.cause as Error)?.message ?? e.cause)}`)
      ),
    DataDirectoryError: (e) => Effect.sync(() => console.error(e.message)),
    SecretKeyInvalid: (e) => Effect.sync(() => console.error(e.message)),
    MigrationError: (e) => Effect.sync(() => console.error(`Database migration failed: ${e.message}`))
  }),
  Effect.zipRight(Effect.sync(() => (process.exitCode = 1)))
)

process.once("SIGTERM", () => setTimeout(() => process.exit(1), drainTimeoutMs).unref())
NodeRuntime.runMain(program)
