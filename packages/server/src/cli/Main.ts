#!/usr/bin/env node
// `trading-platform <command>`: `serve` (also the default, so `trading-platform --port 0` still serves),
// `backtest`, `optimize`, `import`, `migrate`, `openapi` and `operator`. Flags are checked first, by modules that
// load no storage, so `--help` and a wrong flag answer at once; each path then imports only what it runs.

import { rerunWithNodeSnapshotOff } from "./NodeSnapshotFlag.js"

const [command, ...rest] = process.argv.slice(2)

const serve = async () => {
  const { parseArgs, usage } = await import("../CommandLine.js")
  const args = parseArgs(process.argv.slice(2))
  if (args._tag === "Help") return console.log(usage)
  if (args._tag === "Version") return console.log((await import("../Version.js")).version)
  if (args._tag === "Invalid") {
    console.error(args.message)
    return void (process.exitCode = 2)
  }
  // The server's entry reads its flags from process.argv.
  await import("../main.js")
}

const runOne = async (name: string, argv: ReadonlyArray<string>) => {
  const { checkCommand, commandUsage, isCommand } = await import("./CommandFlags.js")
  if (name === "help") return console.log(commandUsage)
  if (!isCommand(name)) {
    console.error(`Unknown command ${name}\n\n${commandUsage}`)
    return void (process.exitCode = 2)
  }
  const checked = await checkCommand(name, argv)
  if (checked._tag === "Help") return console.log(checked.text)
  if (checked._tag === "Mistake") {
    console.error(checked.message)
    return void (process.exitCode = 2)
  }
  const { runCommand } = await import("./Commands.js")
  process.exitCode = await runCommand(checked.plan)
}

if (rerunWithNodeSnapshotOff()) {
  // The command runs in the child, with the flag the V8 program runtime needs.
} else if (command === "serve") {
  process.argv.splice(2, 1)
  void serve()
} else if (command === undefined || command.startsWith("-")) {
  void serve()
} else {
  void runOne(command, rest)
}
