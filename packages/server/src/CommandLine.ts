import { settings } from "./ServerSettings.js"

const names = new Set<string>(settings.map(([name]) => name))

export type ParsedArgs =
  | { readonly _tag: "Run"; readonly values: Map<string, string> }
  | { readonly _tag: "Help" }
  | { readonly _tag: "Version" }
  | { readonly _tag: "Invalid"; readonly message: string }

/** `--data-dir x`, `--data-dir=x` and a bare `--trust-proxy` (true) become `DATA_DIR` and so on. */
export const parseArgs = (argv: ReadonlyArray<string>): ParsedArgs => {
  const values = new Map<string, string>()
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === "--help" || arg === "-h") return { _tag: "Help" }
    if (arg === "--version" || arg === "-v") return { _tag: "Version" }
    const match = /^--([a-z0-9-]+)(?:=(.*))?$/.exec(arg)
    const name = match?.[1]?.replaceAll("-", "_").toUpperCase()
    if (!match || !name || !names.has(name)) {
      return { _tag: "Invalid", message: `${arg} is not a flag of trading-platform; see trading-platform --help` }
    }
    const next = argv[i + 1]
    const value = match[2] ?? (next !== undefined && !next.startsWith("--") ? (i++, next) : "true")
    values.set(name, value)
  }
  return { _tag: "Run", values }
}

export const usage = [
  "Usage: trading-platform [--flag value ...] | --version | --help",
  "       trading-platform backtest|import|migrate|openapi|operator ... (see trading-platform backtest --help)",
  "",
  "Every flag may also be given as an environment variable (flags win):",
  ...settings.map(([name, help]) =>
    `  --${name.toLowerCase().replaceAll("_", "-").padEnd(26)} ${name.padEnd(26)} ${help}`
  )
].join("\n")
