import { spawn } from "node:child_process"
import { createRequire } from "node:module"

const flag = "--no-node-snapshot"

/** Whether the command runs programs in V8, the default: unless `SANDBOX_RUNTIME=quickjs` or `--sandbox-runtime quickjs`. */
const wantsV8 = () => {
  const argv = process.argv
  const flagged = argv.some((arg, i) =>
    arg === "--sandbox-runtime=quickjs" || (arg === "--sandbox-runtime" && argv[i + 1] === "quickjs")
  )
  return !flagged && process.env["SANDBOX_RUNTIME"] !== "quickjs"
}

/**
 * Programs run in V8 isolates unless QuickJS is asked for, where `isolated-vm` is installed, and on
 * Node 20 and later the addon needs node started with `--no-node-snapshot`, which a process cannot
 * turn on for itself. Started without the flag where the addon is installed, the command runs
 * itself again with it, passing on its arguments, streams, signals and exit code, and answers
 * true: the caller then does nothing else. Otherwise programs run in QuickJS (the runtime warns
 * once unless QuickJS was asked for).
 */
export const rerunWithNodeSnapshotOff = (): boolean => {
  if (process.execArgv.includes(flag) || (process.env["NODE_OPTIONS"] ?? "").includes(flag)) return false
  if (!wantsV8()) return false
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
