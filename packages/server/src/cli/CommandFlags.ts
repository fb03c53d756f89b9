/**
 * The commands' flags, checked before anything starts: read against each command's table, then
 * decoded with the contract's own schemas (`BacktestRequest`, `CandleImportParams`), so a mistake
 * is answered in the API's words with the flag's name (`--timeframe must be one of 1m, 5m, …; got
 * '2h'`), in one line, before the platform, its storage or its sandbox is loaded. This module
 * imports the contract only; `Commands.ts` runs what it accepts.
 */
import type { BacktestRequest, CandleImportParams } from "@trading-platform/core/contract"
import type { Schema } from "effect"
import { accessSync, constants } from "node:fs"

// The contract (and Effect with it) is loaded only to decode flags, not for `--help`.
const contract = () => import("@trading-platform/core/contract")
type Decoding = Awaited<ReturnType<typeof contract>> & { readonly Schema: typeof Schema }

interface Flag {
  readonly name: string
  /** What the value is, as the usage shows it; a flag without one is a switch. */
  readonly value?: string
  readonly help: string
  /** The field of the contract's schema it sets (its own name with `_` for `-` when absent). */
  readonly field?: string
  /** Read as a number. */
  readonly number?: true
  /** Read as a comma-separated list. */
  readonly list?: true
  readonly required?: true
}

interface Command {
  readonly synopsis: string
  readonly summary: string
  readonly flags: ReadonlyArray<Flag>
  /** What the command takes besides flags, as the usage shows it; none when absent. */
  readonly positionals?: string
}

const database: ReadonlyArray<Flag> = [
  { name: "data-dir", value: "DIR", help: "the embedded database's folder (DATA_DIR, else ./.trading-data)" },
  { name: "database-url", value: "URL", help: "a PostgreSQL database instead (DATABASE_URL)" }
]

// The defaults shown are `backtestDefaults`' (a test holds them to it).
const commands = {
  backtest: {
    synopsis: "backtest --program FILE (--symbol SYMBOL | --symbols A,B,...) --from TIME --to TIME [flags]",
    summary: "run a backtest in this process, no server needed (on an in-memory database unless --data-dir)",
    flags: [
      { name: "program", value: "FILE", help: "the program's source", required: true },
      { name: "symbol", value: "SYMBOL", help: "e.g. BTC (or --symbols)" },
      {
        name: "symbols",
        value: "A,B,...",
        help: "up to 10 symbols traded from one balance, e.g. BTC,ETH (or --symbol)",
        list: true
      },
      { name: "from", value: "TIME", help: "ISO date-time where the backtest starts", field: "start", required: true },
      { name: "to", value: "TIME", help: "ISO date-time where it ends", field: "end", required: true },
      { name: "timeframe", value: "TF", help: "1m 5m 15m 30m 1h 4h 1d (1h)" },
      { name: "timeframes", value: "A,B,...", help: "longer timeframes the program reads, e.g. 4h,1d", list: true },
      { name: "exchange", value: "NAME", help: "venue1, venue2 or dataset:NAME (venue1)" },
      { name: "initial-balance", value: "N", help: "the balance it starts with (10000)", number: true },
      { name: "fee-rate", value: "F", help: "taker fee, a fraction of notional (0.00035)", number: true },
      {
        name: "maker-fee-rate",
        value: "F",
        help: "maker fee, a fraction of notional (0.0001)",
        number: true
      },
      { name: "slippage", value: "F", help: "a fraction of notional (0.0005)", number: true },
      { name: "slippage-model", value: "NAME", help: "fixed or volume (fixed)" },
      { name: "fill-timing", value: "NAME", help: "next_open or close (next_open)" },
      { name: "margin-mode", value: "NAME", help: "isolated or cross (isolated)" },
      { name: "leverage", value: "N", help: "1 to 125 (1)", number: true },
      {
        name: "warmup-bars",
        value: "N",
        help: "bars fed to the program before --from, not traded (500)",
        number: true
      },
      { name: "language", value: "NAME", help: "the program's language: javascript or typescript (javascript)" },
      { name: "data-dir", value: "DIR", help: "keep the run in this data directory (memory://: nothing kept)" },
      { name: "json", help: "print the backtest as JSON (for scripts) instead of the summary" }
    ]
  },
  import: {
    synopsis: "import candles FILE... --user EMAIL --name NAME --symbol SYMBOL --timeframe TF [flags]",
    summary: "import candle files (CSV or zip) into a user's dataset, no server needed",
    positionals: "candles FILE...",
    flags: [
      { name: "user", value: "EMAIL", help: "the dataset's owner, a user of the database", required: true },
      { name: "name", value: "NAME", help: "the dataset's name, used as the exchange dataset:NAME", required: true },
      { name: "symbol", value: "SYMBOL", help: "e.g. BTC", required: true },
      { name: "timeframe", value: "TF", help: "the files' timeframe: 1m 5m 15m 30m 1h 4h 1d", required: true },
      { name: "venue", value: "NAME", help: "venue1 or venue2: whose rules backtests on it follow (venue1)" },
      ...database,
      { name: "json", help: "print the result as JSON" }
    ]
  },
  migrate: {
    synopsis: "migrate [--data-dir DIR | --database-url URL]",
    summary: "bring the database to the current schema",
    flags: database
  },
  operator: {
    synopsis: "operator grant|revoke EMAIL | operator list [--data-dir DIR | --database-url URL]",
    summary: "make the user with this e-mail an operator (platform-wide figures), or not; or list them",
    positionals: "grant EMAIL, revoke EMAIL or list",
    flags: database
  },
  openapi: {
    synopsis: "openapi [--out FILE]",
    summary: "print the OpenAPI document (or write it to FILE)",
    flags: [{ name: "out", value: "FILE", help: "write the document to this file" }]
  }
} satisfies Record<string, Command>

export type CommandName = keyof typeof commands

export const isCommand = (name: string): name is CommandName => Object.hasOwn(commands, name)

const exitCodes = "Exit codes: 0 success, 1 the command failed, 2 bad usage (a wrong flag, said in one line)."

/** The list of commands, for `trading-platform help` and an unknown command. */
export const commandUsage = [
  "Usage: trading-platform <command> [flags]",
  "",
  "Commands:",
  `  ${"serve".padEnd(10)} run the reference server (the default; see trading-platform --help)`,
  ...Object.entries(commands).map(([name, c]) => `  ${name.padEnd(10)} ${(c as Command).summary}`),
  "",
  "trading-platform <command> --help lists a command's flags.",
  exitCodes
].join("\n")

/** One command's usage: its synopsis and every flag. */
export const usageOf = (name: CommandName) => {
  const command: Command = commands[name]
  const shown = (f: Flag) => `--${f.name}${f.value === undefined ? "" : ` ${f.value}`}`
  const width = Math.max(...command.flags.map((f) => shown(f).length))
  return [
    `Usage: trading-platform ${command.synopsis}`,
    "",
    `${command.summary[0]!.toUpperCase()}${command.summary.slice(1)}.`,
    "",
    ...command.flags.map((f) => `  ${shown(f).padEnd(width)}  ${f.help}${f.required ? " (required)" : ""}`),
    "",
    exitCodes
  ].join("\n")
}

/** What a command was given, read against its table: a flag's value by its name, and the other arguments. */
interface Read {
  readonly values: ReadonlyMap<string, string | true>
  readonly positionals: ReadonlyArray<string>
  readonly mistakes: ReadonlyArray<string>
  /** Flags given without a value, or without a number (said already, so not "required" again). */
  readonly unset: ReadonlySet<string>
}

const numeric = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i

const read = (name: CommandName, argv: ReadonlyArray<string>): Read => {
  const command: Command = commands[name]
  const values = new Map<string, string | true>()
  const positionals: Array<string> = []
  const mistakes: Array<string> = []
  const unset = new Set<string>()
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1))
      break
    }
    if (!arg.startsWith("-") || arg === "-") {
      positionals.push(arg)
      continue
    }
    const [given, inline] = arg.startsWith("--")
      ? [arg.slice(2).split("=", 1)[0]!, arg.includes("=") ? arg.slice(arg.indexOf("=") + 1) : undefined]
      : [arg, undefined]
    const flag = command.flags.find((f) => f.name === given)
    if (flag === undefined) {
      // Its value, if it has one, goes with it.
      if (inline === undefined && argv[i + 1] !== undefined && !argv[i + 1]!.startsWith("-")) i++
      mistakes.push(
        `${arg.startsWith("--") ? `--${given}` : arg} is not a flag of ${name}; its flags are ${
          command.flags.map((f) => `--${f.name}`).join(", ")
        }`
      )
      continue
    }
    if (flag.value === undefined) {
      if (inline !== undefined) mistakes.push(`--${flag.name} takes no value; got '${inline}'`)
      values.set(flag.name, true)
      continue
    }
    const next = argv[i + 1]
    const value = inline ?? (next !== undefined && !next.startsWith("--") ? (i++, next) : undefined)
    if (value === undefined) {
      mistakes.push(`--${flag.name} needs a value (${flag.value})`)
      unset.add(flag.name)
    } else if (flag.number && !numeric.test(value.trim())) {
      mistakes.push(`--${flag.name} must be a number; got '${value}'`)
      unset.add(flag.name)
    } else values.set(flag.name, value)
  }
  return { values, positionals, mistakes, unset }
}

/**
 * The flags that set fields of `schema`, decoded by it: the decoded value, or one sentence per
 * flag in the API's words. A field the schema requires and no flag gave "is required".
 */
const decodeFlags = <A, I>(
  { parseErrorIssues, Schema, summarizeIssues }: Decoding,
  name: CommandName,
  schema: Schema.Schema<A, I>,
  { unset, values }: Read,
  defaults: Record<string, string> = {}
): { readonly _tag: "Left"; readonly left: string } | { readonly _tag: "Right"; readonly right: A } => {
  const command: Command = commands[name]
  const fieldOf = (f: Flag) => f.field ?? f.name.replaceAll("-", "_")
  const input: Record<string, unknown> = {}
  for (const flag of command.flags) {
    const value = values.get(flag.name) ?? defaults[flag.name]
    if (typeof value === "string") {
      input[fieldOf(flag)] = flag.number ? Number(value) : flag.list ? value.split(",").map((v) => v.trim()) : value
    }
  }
  const decoded = Schema.decodeUnknownEither(schema)(input, { errors: "all", onExcessProperty: "ignore" })
  if (decoded._tag === "Right") return decoded
  return {
    _tag: "Left",
    left: summarizeIssues(
      parseErrorIssues(decoded.left).flatMap(({ message, path }) => {
        const field = path.split(".")[0]!
        const flag = command.flags.find((f) => fieldOf(f) === field)
        if (flag === undefined) return [{ path, message }]
        if (unset.has(flag.name)) return []
        const value = values.get(flag.name) ?? defaults[flag.name]
        return [{
          path: `--${flag.name}`,
          // The API's message names the value it got where it can; said here where it does not.
          message: message === "is missing"
            ? "is required"
            : typeof value === "string" && !message.includes("; got ")
            ? `${message}; got '${value}'`
            : message
        }]
      })
    )
  }
}

const readable = (flag: string, path: string) => {
  try {
    accessSync(path, constants.R_OK)
    return undefined
  } catch (e) {
    return `${flag} ${path} cannot be read: ${(e as Error).message}`
  }
}

const text = (values: ReadonlyMap<string, string | true>, name: string) => {
  const value = values.get(name)
  return typeof value === "string" ? value : undefined
}

interface Storage {
  readonly dataDir: string | undefined
  readonly databaseUrl: string | undefined
}

const storageOf = (values: ReadonlyMap<string, string | true>): Storage => ({
  dataDir: text(values, "data-dir"),
  databaseUrl: text(values, "database-url")
})

/** What a command runs with, its flags checked. */
export type Plan =
  | {
    readonly _tag: "backtest"
    readonly request: BacktestRequest
    readonly program: string
    readonly language: string | undefined
    readonly dataDir: string | undefined
    readonly json: boolean
  }
  | (Storage & {
    readonly _tag: "import"
    readonly params: CandleImportParams
    readonly user: string
    readonly files: ReadonlyArray<string>
    readonly json: boolean
  })
  | (Storage & { readonly _tag: "migrate" })
  | (Storage & { readonly _tag: "operator"; readonly action: "grant" | "revoke" | "list"; readonly email?: string })
  | { readonly _tag: "openapi"; readonly out: string | undefined }

export type Checked =
  | { readonly _tag: "Help"; readonly text: string }
  | { readonly _tag: "Mistake"; readonly message: string }
  | { readonly _tag: "Ready"; readonly plan: Plan }

const mistake = (messages: ReadonlyArray<string>): Checked => ({ _tag: "Mistake", message: messages.join("; ") })

const noPositionals = (name: CommandName, positionals: ReadonlyArray<string>) =>
  positionals.length === 0 ? [] : [`${name} takes flags only; got '${positionals[0]}'`]

/** Checks a command's arguments, loading nothing: its plan, its usage (`--help`), or its mistakes in one line. */
export const checkCommand = async (name: CommandName, argv: ReadonlyArray<string>): Promise<Checked> => {
  if (argv.includes("--help") || argv.includes("-h")) return { _tag: "Help", text: usageOf(name) }
  const needed = name === "backtest" || name === "import"
    ? { ...(await contract()), Schema: (await import("effect")).Schema }
    : undefined
  const given = read(name, argv)
  const { mistakes, positionals, values } = given
  // The schema says which of its fields are missing; the others (the program, the user) are said here.
  const decoded = new Set(
    needed === undefined
      ? []
      : Object.keys(name === "backtest" ? needed.BacktestRequest.fields : needed.CandleImportParams.fields)
  )
  const required = (commands[name] as Command).flags
    .filter((f) => f.required && !decoded.has(f.field ?? f.name) && !values.has(f.name))
    .map((f) => `--${f.name} is required`)
  switch (name) {
    case "backtest": {
      const request = decodeFlags(needed!, name, needed!.BacktestRequest, given, { timeframe: "1h" })
      const program = text(values, "program")
      const named = (flag: string) => values.has(flag) || given.unset.has(flag)
      const markets = named("symbol") === named("symbols") ? ["--symbol or --symbols is required, one of the two"] : []
      const all = [
        ...mistakes,
        ...noPositionals(name, positionals),
        ...required,
        ...markets,
        ...(program === undefined ? [] : [readable("--program", program)].filter((m) => m !== undefined)),
        ...(request._tag === "Left" ? [request.left] : [])
      ]
      if (all.length > 0 || request._tag === "Left") return mistake(all)
      return {
        _tag: "Ready",
        plan: {
          _tag: "backtest",
          request: request.right,
          program: program!,
          language: text(values, "language"),
          dataDir: text(values, "data-dir"),
          json: values.has("json")
        }
      }
    }
    case "import": {
      const [what, ...files] = positionals
      const params = decodeFlags(needed!, name, needed!.CandleImportParams, given)
      const all = [
        ...(what === "candles" ? [] : [`import takes candles, as in: import candles FILE...; got '${what ?? ""}'`]),
        ...mistakes,
        ...required,
        ...(what === "candles" && files.length === 0 ? ["name at least one candle file to import"] : []),
        ...files.map((file) => readable("the file", file)).filter((m) => m !== undefined),
        ...(params._tag === "Left" ? [params.left] : [])
      ]
      if (all.length > 0 || params._tag === "Left") return mistake(all)
      return {
        _tag: "Ready",
        plan: {
          _tag: "import",
          params: params.right,
          user: text(values, "user")!,
          files,
          json: values.has("json"),
          ...storageOf(values)
        }
      }
    }
    case "operator": {
      const [action, email, ...extra] = positionals
      const needsEmail = action === "grant" || action === "revoke"
      const all = [
        ...(needsEmail || action === "list"
          ? needsEmail
            ? email === undefined || extra.length > 0 ? [`operator ${action} takes one e-mail`] : []
            : email === undefined
            ? []
            : ["operator list takes no e-mail"]
          : [`operator takes grant EMAIL, revoke EMAIL or list; got '${action ?? ""}'`]),
        ...mistakes
      ]
      if (all.length > 0) return mistake(all)
      return {
        _tag: "Ready",
        plan: {
          _tag: "operator",
          action: action as "grant" | "revoke" | "list",
          ...(email === undefined ? {} : { email }),
          ...storageOf(values)
        }
      }
    }
    case "migrate": {
      const all = [...mistakes, ...noPositionals(name, positionals)]
      return all.length > 0 ? mistake(all) : { _tag: "Ready", plan: { _tag: "migrate", ...storageOf(values) } }
    }
    case "openapi": {
      const all = [...mistakes, ...noPositionals(name, positionals)]
      return all.length > 0 ? mistake(all) : { _tag: "Ready", plan: { _tag: "openapi", out: text(values, "out") } }
    }
  }
}
