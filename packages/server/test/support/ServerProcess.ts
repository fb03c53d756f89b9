import { Effect, Schedule } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { bundleServer } from "../../bundle.config.js"

const root = fileURLToPath(new URL("../../../../", import.meta.url))

/** How a test starts the server: its sources through tsx, or `npm start`'s bundle (built, and cached, by scripts/start.mjs). */
const entries = {
  sources: ["--import", "tsx", "--conditions=@trading-platform/source", join(root, "packages/server/src/main.ts")],
  bundle: [join(root, "scripts/start.mjs")]
}
/** One of the ways above, or the path of a built server's `main.js` (see `builtServer`). */
export type Entry = keyof typeof entries | { readonly main: string }

export interface Running {
  readonly child: ChildProcess
  readonly output: () => string
  readonly exited: Promise<number | null>
}

/**
 * Starts the server's entry point as `npm start` does (node with `--no-node-snapshot`, so programs
 * run in V8 isolates), in its own process (as another OS user when `uid` is given).
 */
export const start = (
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  user: { uid?: number; gid?: number } = {},
  entry: Entry = "sources"
): Running => {
  const child = spawn(process.execPath, [
    "--no-node-snapshot",
    ...(typeof entry === "string" ? entries[entry] : [entry.main]),
    ...args
  ], {
    env: { PATH: process.env["PATH"] ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    ...user
  })
  let output = ""
  child.stdout!.on("data", (chunk) => (output += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  return { child, output: () => output, exited }
}

/** Polls the output until `pattern` shows up, with a deadline. */
export const waitFor = async (running: Running, pattern: RegExp, deadlineMs = 60_000) => {
  const until = Date.now() + deadlineMs
  while (Date.now() < until) {
    const match = pattern.exec(running.output())
    if (match) return match
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`timed out waiting for ${pattern}; output:\n${running.output()}`)
}

/** A port nobody listens on right now (the CLI refuses port 0). */
const freePort = Effect.async<number>((resume) => {
  const probe = createServer().listen(0, "127.0.0.1", () => {
    const { port } = probe.address() as { port: number }
    probe.close(() => resume(Effect.succeed(port)))
  })
})

/**
 * `npm start` from the sources on in-memory storage, with extra flags, stopped with the scope: its
 * base URL once `/api/health` answers (polled for at most 120 s, a cold start on a busy machine).
 */
export const referenceServer = (flags: ReadonlyArray<string> = [], entry: Entry = "sources") =>
  Effect.gen(function*() {
    const port = yield* freePort
    yield* Effect.acquireRelease(
      Effect.sync(() => start(["--port", String(port), "--data-dir", "memory://", ...flags], {}, {}, entry)),
      (running) => Effect.sync(() => running.child.kill())
    )
    const base = `http://127.0.0.1:${port}`
    yield* Effect.tryPromise(() => fetch(`${base}/api/health`)).pipe(
      Effect.retry(Schedule.spaced("200 millis").pipe(Schedule.upTo("120 seconds")))
    )
    return base
  })

/**
 * The built server as `npm run build` lays it out: the package build writes `dist/main.js` and the
 * files beside it with `bundleServer` (`tsup.config.ts`; the library entries and declarations it
 * also writes are checked by `packaging/Packages.test.ts`). Built here into a scratch `dist/` of
 * its own under `node_modules/.cache` (where Node finds the packages it leaves external), so a test
 * run needs no build first and never rewrites the working tree's `dist/`; removed with the scope.
 */
export const builtServer = (flags: ReadonlyArray<string> = []) =>
  Effect.gen(function*() {
    const dist = yield* Effect.acquireRelease(
      Effect.promise(async () => {
        const cache = join(root, "node_modules", ".cache", "trading-platform")
        mkdirSync(cache, { recursive: true })
        const dir = mkdtempSync(join(cache, "built-server-"))
        await bundleServer(join(dir, "dist"))
        return dir
      }),
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    )
    return yield* referenceServer(flags, { main: join(dist, "dist", "main.js") })
  })
