import { Duration, Effect, Pool, Queue, type Scope } from "effect"
import { randomBytes } from "node:crypto"
import { mkdirSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { basename, extname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { type ResourceLimits, Worker } from "node:worker_threads"
import { heartbeatSlot, makeHeartbeatBuffer } from "./Heartbeat.js"
import { nodeSnapshotOff, snapshotOffField } from "./SnapshotFlag.js"
import { endThread } from "./ThreadEnd.js"

// Resolved on first use: the CommonJS build has no import.meta, and the ESM one no __filename.
const here = () => (typeof __filename === "string" ? pathToFileURL(__filename) : new URL(import.meta.url))

/** The file `require(specifier)` loads from here (from the sources, the build or a bundle), for a thread to load. */
export const requirePath = (specifier: string) => createRequire(here()).resolve(specifier)

/**
 * From the sources, an entry bundled by esbuild (a dev dependency, so present wherever the sources
 * run), once per process and entry: a thread then reads one file, where loading the entry's
 * thousands of modules through tsx took seconds per thread (10 s under load; 5x the whole
 * BacktestThread suite). Bundled as the server's build bundles its threads
 * (`packages/server/bundle.config.ts`): dependencies inlined but for those that find their own
 * files (PGlite, QuickJS), which Node resolves from `node_modules`, so the bundle is written under
 * `node_modules/.cache` and removed when the process exits.
 */
const bundles = new Map<string, URL>()

/** Packages that find their own files (WebAssembly, data, native modules) next to their modules: never bundled. */
export const selfLocatingPackages = ["@electric-sql/pglite", "quickjs-emscripten", "@jitl/*", "msgpackr-extract"]

/** An ES module bundle's first line: bundled CommonJS dependencies call `require` (for Node's built-in modules). */
export const requireBanner =
  "import { createRequire as __createRequire } from \"node:module\"; const require = __createRequire(import.meta.url);"

const bundled = (entry: URL): URL => {
  const known = bundles.get(entry.href)
  if (known !== undefined) return known
  const esbuildPath = requirePath("esbuild")
  const modules = esbuildPath.slice(0, esbuildPath.lastIndexOf("node_modules") + "node_modules".length)
  const dir = join(modules, ".cache", "trading-platform", "threads")
  mkdirSync(dir, { recursive: true })
  const outfile = join(dir, `${process.pid}-${randomBytes(4).toString("hex")}-${basename(entry.pathname, ".ts")}.mjs`)
  const esbuild = createRequire(here())("esbuild") as typeof import("esbuild")
  esbuild.buildSync({
    entryPoints: [fileURLToPath(entry)],
    outfile,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    conditions: ["@trading-platform/source"],
    external: selfLocatingPackages,
    banner: { js: requireBanner },
    logLevel: "warning"
  })
  process.once("exit", () => rmSync(outfile, { force: true }))
  const url = pathToFileURL(outfile)
  bundles.set(entry.href, url)
  return url
}

/**
 * Starts a thread's entry module, named by its path under `src/` without extension (e.g.
 * `backtests/BacktestThreadEntry`). The build has it at the same path under `dist/` (see
 * `tsup.config.ts`) with this module's extension: `.js` or `.cjs` in the build (bundled into the
 * package's root), `.ts` in the sources (vitest, tsx), which a plain Node thread cannot load: from
 * the sources the thread loads the entry's bundle (`bundled`).
 */
const spawn = (entry: string, workerData: unknown, resourceLimits: ResourceLimits | undefined) => {
  const base = here()
  const extension = extname(base.pathname)
  // The sources have this module in src/jobs/; the build has it bundled at the root of dist/.
  const root = new URL(extension === ".ts" ? "../" : "./", base)
  const url = new URL(`${entry}${extension}`, root)
  const options = { workerData, ...(resourceLimits === undefined ? {} : { resourceLimits }) }
  // A bundled entry needs none of the process's node flags, and the loader of one run from the
  // sources (`--import tsx`), in a thread that ends, made isolated-vm abort the process as the
  // thread was torn down (`IsolateEnvironment::GetCurrent`: a server run from the sources, on every
  // program check). It learns of the process-wide `--no-node-snapshot` from its `workerData` (see
  // `nodeSnapshotOff`): without that, every thread started from the sources ran its programs in
  // QuickJS, whatever runtime its limits named.
  return extension === ".ts"
    ? new Worker(bundled(url), { ...options, execArgv: [] })
    : new Worker(url, options)
}

/** What the main thread hears from a worker thread. */
export type WorkerThreadEvent =
  | { readonly _tag: "Message"; readonly message: unknown }
  /** The watchdog stopped the thread: one call ran over `stallMillis`. */
  | { readonly _tag: "Stalled" }
  /** The thread crashed or exited on its own. */
  | { readonly _tag: "Died"; readonly message: string }

/** A running worker thread, as the main thread drives it. */
export interface WorkerThread {
  readonly take: Effect.Effect<WorkerThreadEvent>
  readonly post: (message: unknown) => Effect.Effect<void>
}

export interface WorkerThreadOptions {
  /** The entry module (see `spawn`); it gets `workerData` with `heartbeat` added. */
  readonly entry: string
  readonly workerData: object
  /** Names the thread in the reasons it died, e.g. "backtest thread". */
  readonly name: string
  /** Caps on the thread's own JavaScript heap: a runaway allocation ends the thread, not the server. */
  readonly resourceLimits?: ResourceLimits
  /** The watchdog stops the thread when one call it marked busy lasts longer (see `Heartbeat.ts`). */
  readonly stallMillis: number
  /** Told when the thread starts and when it exits (for counting live threads). */
  readonly onStart?: () => void
  readonly onExit?: () => void
}

/**
 * Runs an entry module in a worker thread of its own, ended when the scope closes (asked with
 * `endThread`, terminated if it does not exit soon). A
 * watchdog on a real timer, not the Effect clock (so it also fires under a test clock), terminates
 * a thread that has been in one call for over `stallMillis`: untrusted work counted as one step
 * cannot be interrupted from inside, and must not hold a thread forever.
 */
export const startWorkerThread = (options: WorkerThreadOptions): Effect.Effect<WorkerThread, never, Scope.Scope> =>
  Effect.gen(function*() {
    const events = yield* Queue.unbounded<WorkerThreadEvent>()
    const heartbeat = makeHeartbeatBuffer()
    const beats = new Int32Array(heartbeat)

    const worker = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const worker = spawn(
          options.entry,
          { ...options.workerData, heartbeat, [snapshotOffField]: nodeSnapshotOff() },
          options.resourceLimits
        )
        options.onStart?.()
        let ended = false
        let exited = false
        worker.once("exit", (code) => {
          exited = true
          options.onExit?.()
          if (!ended) {
            Queue.unsafeOffer(events, { _tag: "Died", message: `The ${options.name} exited with code ${code}` })
          }
        })
        worker.on("error", (error) => {
          ended = true
          Queue.unsafeOffer(events, { _tag: "Died", message: `The ${options.name} died: ${error.message}` })
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
          } else if (now - movedAt > options.stallMillis) {
            ended = true
            clearInterval(watchdog)
            Queue.unsafeOffer(events, { _tag: "Stalled" })
            void worker.terminate()
          }
        }, Math.max(10, options.stallMillis / 8))
        return {
          worker,
          stop: () => {
            ended = true
            clearInterval(watchdog)
            if (exited) return Promise.resolve()
            // Asked to end, the thread releases what it holds and exits when its work is done:
            // terminating a thread whose isolated-vm isolate is still being torn down aborts the
            // whole process (`IsolateEnvironment::GetCurrent`). Terminated only if it has not
            // exited within `stallMillis` (stuck in a call, or not listening).
            worker.postMessage(endThread)
            return new Promise<void>((resolve) => {
              const fallback = setTimeout(() => void worker.terminate().then(() => resolve()), options.stallMillis)
              worker.once("exit", () => {
                clearTimeout(fallback)
                resolve()
              })
            })
          }
        }
      }),
      ({ stop }) => Effect.promise(stop)
    ).pipe(Effect.map(({ worker }) => worker))

    return { take: Queue.take(events), post: (message) => Effect.sync(() => worker.postMessage(message)) }
  })

/** How long a thread kept warm serves: a minute after it started, it ends (once its use then ends). */
const threadLife = Duration.minutes(1)

/**
 * Threads kept warm for the next use (a new thread costs its modules, its runtime and its heap's
 * warm-up, often most of the work): at most `size` at once, each lent to one user until the user's
 * scope closes, then kept if `reusable` says its last use ended as it should, else ended (a use
 * interrupted or stopped may leave the thread mid-work). A thread ends `threadLife` after it
 * started (at once if idle, else when its use ends), so an idle pool holds no thread for long and
 * a busy one renews its threads every minute; all end when the scope that made the pool closes.
 * Not effect's usage TTL: its check wakes every minute forever, which under a test clock moved by
 * months ran hundreds of thousands of times. Answers how to borrow one.
 */
export const keptWarm = <T extends { readonly reusable: () => boolean }, E>(
  start: Effect.Effect<T, E, Scope.Scope>,
  size: number
): Effect.Effect<Effect.Effect<T, E, Scope.Scope>, never, Scope.Scope> =>
  Effect.map(
    Pool.makeWithTTL({ acquire: start, min: 0, max: size, timeToLive: threadLife, timeToLiveStrategy: "creation" }),
    (pool) =>
      Effect.tap(
        Pool.get(pool),
        // Runs before the pool's own release (finalizers run last first), so the thread is never lent again.
        (thread) => Effect.addFinalizer(() => thread.reusable() ? Effect.void : Pool.invalidate(pool, thread))
      )
  )
