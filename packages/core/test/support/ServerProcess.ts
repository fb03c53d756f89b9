import { Effect, Redacted } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../../../", import.meta.url))
const script = fileURLToPath(new URL("./WorkerProcess.ts", import.meta.url))

/**
 * A platform instance as an OS process of its own (`WorkerProcess.ts`, run from the sources like
 * `npm start`) on the PostgreSQL database at `url`, configured by `env` (e.g.
 * `BACKTEST_CONCURRENCY`), once it is ready; the scope's close kills it with `stopSignal`. For the
 * tests of work shared by several server processes.
 */
export const serverProcess = (
  url: Redacted.Redacted,
  env: Readonly<Record<string, string>>,
  stopSignal: NodeJS.Signals = "SIGTERM"
) =>
  Effect.acquireRelease(
    Effect.async<ChildProcess>((resume) => {
      const child = spawn(process.execPath, ["--conditions=@trading-platform/source", "--import", "tsx", script], {
        cwd: root,
        env: {
          ...process.env,
          DATABASE_URL: Redacted.value(url),
          SECRET_KEY: "test-secret-key-0123456789abcdef0123456789",
          ...env
        },
        stdio: ["ignore", "pipe", "inherit"]
      })
      child.stdout!.on("data", (data) => String(data).includes("ready") && resume(Effect.succeed(child)))
      child.once(
        "exit",
        (code, signal) => resume(Effect.die(new Error(`the server process exited with ${code ?? signal}`)))
      )
    }),
    (child) => Effect.sync(() => child.kill(stopSignal))
  )
