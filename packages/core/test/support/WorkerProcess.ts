/**
 * One platform instance with its backtest workers and signal engine as an OS process of its own,
 * configured from the environment like `npm start`; prints "ready" once it has started. Run by the
 * tests of jobs and of the signal engine across processes.
 */
import { PlatformConfig, PlatformLive } from "@trading-platform/core"
import { Effect, Layer } from "effect"

const ready = Layer.effectDiscard(Effect.sync(() => console.log("ready")))

Effect.runFork(Layer.launch(ready.pipe(Layer.provide(PlatformLive), Layer.provide(PlatformConfig.fromEnv))))
