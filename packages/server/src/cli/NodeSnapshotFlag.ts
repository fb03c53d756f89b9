import { spawn } from "node:child_process"
import { createRequire } from "node:module"

const flag = "--no-node-snapshot"

/**
 * Programs run in V8 isolates where `isolated-vm` is installed, and on Node 20 and later the addon
 * needs node started with `--no-node-snapshot`, which a process cannot turn on for itself. Started
 * without it where the addon is installed (and `SANDBOX_RUNTIME` is not `quickjs`), the command
 * runs itself again with the flag, passing on its arguments, streams, signals and exit code, and
 * answers true: the caller then does nothing else. If that child cannot be started, the command
 * runs here and programs run in QuickJS (the runtime warns once).
 */
export const rerunWithNodeSnapshotOff = (): boolean => {
  if (process.execArgv.includes(flag) || (process.env["NODE_OPTIONS"] ?? "").includes(flag)) return false
  if (process.env["SANDBOX_RUNTIME"] === "quickjs") return false
  try {
    // A name the bundler does not follow: the addon is optional, resolved from node_modules.
    createRequire(import.meta.url).resolve(["isolated", "vm"].join("-"))
  } catch {
    return false
  }
  const child = spawn(process.execPath, [...process.execArgv, flag, ...process.argv.slice(1)], { stdio: "inherit" })
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const
  const forward = (signal: NodeJS.Signals) => child.kill(signal)
  for (const signal of signals) process.on(signal, forward)
  child.on("exit", (code, signal) => {
    for (const s of signals) process.off(s, forward)
    // Ended by a signal, this process ends by the same one, as the command itself would have.
    if (signal !== null) process.kill(process.pid, signal)
    else process.exit(code ?? 1)
  })
  return true
}
