#!/usr/bin/env node
// `trading-platform <command>`: `serve` (also the default, so `trading-platform --port 0` still serves),
// `backtest`, `import`, `migrate`, `openapi` and `operator`. Each path imports only what it runs, so serving loads no commands.

const [command, ...rest] = process.argv.slice(2)

if (command === "serve") {
  // The server's entry reads its flags from process.argv.
  process.argv.splice(2, 1)
  void import("../main.js")
} else if (command === undefined || command.startsWith("-")) {
  void import("../main.js")
} else {
  void import("./Commands.js").then(async ({ commandUsage, runCommand }) => {
    if (
      command === "backtest" || command === "import" || command === "migrate" || command === "openapi" ||
      command === "operator"
    ) {
      process.exitCode = await runCommand(command, rest)
    } else {
      console.error(`Unknown command ${command}\n\n${commandUsage}`)
      process.exitCode = 2
    }
  })
}
