#!/usr/bin/env node
import { HttpServer } from "@effect/platform"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { describeConfigError, PgliteClient, PlatformConfig, resolveSandboxRuntime } from "@trading-platform/core"
import { Clock, ConfigProvider, Duration, Effect, Layer, Logger, Option, Ref } from "effect"
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

// The signal that stopped the server, for the shutdown's log line (`NodeRuntime.runMain` acts on both).
let received: NodeJS.Signals | undefined

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

/** Once listening: where the API, its reference and its data are, and where programs run, so a newcomer knows where to go. */
const startBanner = (consoleOn: boolean) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    const { sandbox, storage } = yield* PlatformConfig
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
    yield* Effect.log(
      resolveSandboxRuntime(sandbox) === "v8"
        ? "Programs run in V8 isolates (isolated-vm)"
        : "Programs run in QuickJS (WebAssembly)"
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

/**
 * A line when the shutdown starts and one when it has finished, with how long it took (what each
 * job worker hands back is logged in between). The first is a finalizer of a layer built once the
 * server listens, so it runs before the server stops accepting; `began` answers when it did.
 */
const shutdownLog = (began: Ref.Ref<Option.Option<number>>) => ({
  starting: Layer.scopedDiscard(Effect.zipRight(
    HttpServer.HttpServer,
    Effect.addFinalizer(() =>
      Effect.gen(function*() {
        yield* Ref.set(began, Option.some(yield* Clock.currentTimeMillis))
        yield* Effect.log(
          `Shutting down${received === undefined ? "" : ` on ${received}`}: finishing the requests in flight ` +
            `(at most ${drainTimeoutMs / 1000} s), handing running jobs back, closing the database`
        )
      })
    )
  )),
  finished: Effect.flatMap(Ref.get(began), (at) =>
    Option.isNone(at)
      ? Effect.void
      : Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.log(`Shut down in ${Duration.format(Duration.millis(now - at.value))}`)))
})

const program = Effect.gen(function*() {
  const { console: consoleOn, host, logLevel, port } = yield* serverConfig
  const shutdown = shutdownLog(yield* Ref.make(Option.none<number>()))
  return yield* Layer.launch(
    Layer.mergeAll(startBanner(consoleOn), tuneOnceListening, shutdown.starting).pipe(
      Layer.provide(
        ServerLive({ port, host }).pipe(
          Layer.provide(DocsPageLive),
          Layer.provide(consoleOn ? ConsoleLive : Layer.empty)
        )
      ),
      Layer.provide(PlatformConfig.fromEnv)
    )
  ).pipe(
    // Layer.launch has released every layer (the database last) by the time it is interrupted.
    Effect.onInterrupt(() => shutdown.finished),
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

process.once("SIGINT", () => (received ??= "SIGINT"))
process.once("SIGTERM", () => {
  received ??= "SIGTERM"
  setTimeout(() => process.exit(1), drainTimeoutMs).unref()
})
NodeRuntime.runMain(program)
