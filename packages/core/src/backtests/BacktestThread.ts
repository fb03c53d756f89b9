import { Data, Effect, Queue, Schema, type Scope } from "effect"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { extname } from "node:path"
import { pathToFileURL } from "node:url"
import { Worker } from "node:worker_threads"
import type { ProgramInvalid } from "../http/Errors.js"
import { ProgramRunError } from "../sandbox/Decision.js"
import { loadFailure } from "../sandbox/LoadFailure.js"
import type { ProgramRun } from "../sandbox/ProgramRuntime.js"
import type { SandboxLimits } from "../sandbox/QuickJsRuntime.js"
import type { BacktestSettings } from "./BacktestEngine.js"
import { type BacktestThreadInput, FromThread, heartbeatSlot, type ToThread } from "./BacktestThreadProtocol.js"

/** The thread crashed or exited on its own: not the program's verdict, so the job may be tried again. */
export class BacktestThreadDied extends Data.TaggedError("BacktestThreadDied")<{ readonly message: string }> {}

/**
 * Caps on the thread's own JavaScript heap, beyond QuickJS's (which lives in WASM memory): a
 * runaway allocation outside the sandbox ends this thread, not the server. The engine keeps one
 * equity point per bar, so 500 000 bars need well under this.
 */
const resourceLimits = { maxOldGenerationSizeMb: 512 }

let live = 0

/** Backtest threads of this process that have not exited yet (for monitoring and tests). */
export const liveBacktestThreads = () => live

// Resolved on first use: the CommonJS build has no import.meta, and the ESM one no __filename.
const here = () => (typeof __filename === "string" ? pathToFileURL(__filename) : new URL(import.meta.url))

/**
 * Starts the thread's module, which sits next to this one with the same extension: `.js` or
 * `.cjs` in the build, `.ts` in the sources (vitest, tsx). A plain Node thread cannot load
 * TypeScript, so from the sources it first registers tsx's loader.
 */
const spawn = (workerData: BacktestThreadInput) => {
  const base = here()
  const entry = new URL(`./BacktestThreadEntry${extname(base.pathname)}`, base)
  if (!entry.pathname.endsWith(".ts")) return new Worker(entry, { workerData, resourceLimits })
  // tsx's ESM API (its CommonJS one cannot register from here), found through its exports map.
  const tsxPackage = createRequire(base).resolve("tsx/package.json")
  const tsx = new URL(JSON.parse(readFileSync(tsxPackage, "utf8")).exports["./esm/api"].import.default, pathToFileURL(tsxPackage))
  const bootstrap = `import(${JSON.stringify(tsx.href)}).then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}) })`
  return new Worker(bootstrap, { eval: true, workerData, resourceLimits })
}

type Event =
  | { readonly _tag: "Message"; readonly message: unknown }
  | { readonly _tag: "Stalled" }
  | { readonly _tag: "Died"; readonly message: string }

/** A running backtest thread, as the main thread drives it. */
export interface BacktestThread {
  /**
   * The thread's next message: `Pull` for the next window, or `Done` with the outcome. Fails with
   * the program's failure (including a stall the watchdog stopped) or when the thread died.
   */
  readonly take: Effect.Effect<
    Extract<FromThread, { _tag: "Pull" | "Done" }>,
    ProgramRunError | ProgramInvalid | BacktestThreadDied
  >
  readonly post: (message: ToThread) => Effect.Effect<void>
}

/**
 * Runs one backtest of `run` in its own worker thread, terminated when the scope closes (the run
 * ended, was cancelled or taken over, or the instance stops). A watchdog on a real timer, not the
 * Effect clock (so it also fires under a test clock), terminates a thread whose program has been
 * in one call for over twice `wallMillisPerCall`: work QuickJS counts as one step cannot be
 * interrupted from inside, and must not hold a thread forever.
 */
export const startBacktestThread = (
  input: { readonly run: ProgramRun; readonly settings: BacktestSettings; readonly limits: SandboxLimits }
): Effect.Effect<BacktestThread, never, Scope.Scope> =>
  Effect.gen(function*() {
    const events = yield* Queue.unbounded<Event>()
    const heartbeat = new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT)
    const beats = new Int32Array(heartbeat)
    const stallMillis = 2 * input.limits.wallMillisPerCall
    let loaded = false

    const worker = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const worker = spawn({ ...input, heartbeat })
        live++
        let ended = false
        worker.once("exit", (code) => {
          live--
          if (!ended) Queue.unsafeOffer(events, { _tag: "Died", message: `The backtest thread exited with code ${code}` })
        })
        worker.on("error", (error) => {
          ended = true
          Queue.unsafeOffer(events, { _tag: "Died", message: `The backtest thread died: ${error.message}` })
        })
        worker.on("message", (message) => Queue.unsafeOffer(events, { _tag: "Message", message }))
        let calls = 0
        let movedAt = Date.now()
        const watchdog = setInterval(() => {
          const now = Date.now()
          const seen = Atomics.load(beats, heartbeatSlot.calls)
          // Before the first call (starting up, instantiating WASM) there is nothing to be stuck in.
          if (Atomics.load(beats, heartbeatSlot.busy) === 0 || seen !== calls || seen === 0) {
            calls = seen
            movedAt = now
          } else if (now - movedAt > stallMillis) {
            ended = true
            clearInterval(watchdog)
            Queue.unsafeOffer(events, { _tag: "Stalled" })
            void worker.terminate()
          }
        }, Math.max(10, input.limits.wallMillisPerCall / 4))
        return {
          worker,
          stop: () => {
            ended = true
            clearInterval(watchdog)
            return worker.terminate()
          }
        }
      }),
      ({ stop }) => Effect.promise(stop)
    ).pipe(Effect.map(({ worker }) => worker))

    const decode = Schema.decodeUnknown(FromThread)
    const take: BacktestThread["take"] = Effect.flatMap(Queue.take(events), (event) => {
      switch (event._tag) {
        case "Died":
          return Effect.fail(new BacktestThreadDied({ message: event.message }))
        case "Stalled":
          return Effect.fail(
            loaded
              ? new ProgramRunError({
                reason: "cpu_budget_exceeded",
                message: `decide was stuck in one call for over ${stallMillis} ms; its thread was stopped`
              })
              : loadFailure({ overBudget: true })
          )
        case "Message":
          return Effect.flatMap(Effect.orDie(decode(event.message)), (message): Effect.Effect<
            Extract<FromThread, { _tag: "Pull" | "Done" }>,
            ProgramRunError | ProgramInvalid | BacktestThreadDied
          > => {
            switch (message._tag) {
              case "Failed":
                return Effect.fail(message.error)
              case "Crashed":
                return Effect.fail(new BacktestThreadDied({ message: `The backtest thread failed: ${message.message}` }))
              case "Pull":
                loaded = true
                return Effect.succeed(message)
              case "Done":
                return Effect.succeed(message)
            }
          })
      }
    })

    return { take, post: (message) => Effect.sync(() => worker.postMessage(message)) }
  })
