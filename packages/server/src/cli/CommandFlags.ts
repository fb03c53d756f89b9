/**
 * The commands' flags, checked before anything starts: read against each command's table, then
 * decoded with the contract's own schemas (`BacktestRequest`, `CandleImportParams`), so a mistake
 * is answered in the API's words with the flag's name (`--timeframe must be one of 1m, 5m, …; got
 * '2h'`), in one line, before the platform, its storage or its sandbox is loaded. This module
 * imports the contract only; `Commands.ts` runs what it accepts.
 */
import type { BacktestRequest, CandleImportParams, OptimizationRequest } from "@trading-platform/core/contract"
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
  /** Read by this function: the field's value, or why the text is wrong. */
  readonly parse?: (value: string) => { readonly value: unknown } | { readonly mistake: string }
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

/** A backtest's flags: the fields of `BacktestRequest`, the program, and where the run is kept. */
const backtestFlags: ReadonlyArray<Flag> = [
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
  { name: "data-dir", value: "DIR", help: "keep the run in this data directory (memory://: nothing kept)" }
]

const numeric = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i

/** `a=1,b=2` as `{a: 1, b: 2}`, each name one of `names` and each value a number. */
const pairsOf = (text: string, names: ReadonlyArray<string>) => {
  const value: Record<string, number> = {}
  for (const pair of text.split(",")) {
    const [name = "", number = ""] = pair.split("=").map((p) => p.trim())
    if (!names.includes(name)) return { mistake: `names ${names.join(" or ")}; got '${name}'` }
    if (!numeric.test(number)) return { mistake: `needs a number for ${name}; got '${number}'` }
    value[name] = Number(number)
  }
  return { value }
}

/** A choice as the program declares it: a number, a boolean or text. */
const choiceOf = (text: string) =>
  numeric.test(text) ? Number(text) : text === "true" ? true : text === "false" ? false : text

/** `--space`: each parameter's range with its step (or steps), its choices, or nothing (its declared range). */
const spaceOf = (text: string) => {
  const value: Record<string, Record<string, unknown>> = {}
  for (const entry of text.split(",").map((e) => e.trim())) {
    const [name = "", spec] = entry.split("=")
    if (spec === undefined) {
      value[name] = {}
      continue
    }
    const range = /^(.+?)\.\.([^:/]+)(?::(.+)|\/(.+))?$/.exec(spec)
    if (range === null) {
      value[name] = { choices: spec.split("|").map(choiceOf) }
      continue
    }
    const [, min, max, step, steps] = range
    const numbers = [min, max, step, steps].filter((n) => n !== undefined)
    if (!numbers.every((n) => numeric.test(n!))) return { mistake: `needs numbers in '${entry}'` }
    value[name] = {
      min: Number(min),
      max: Number(max),
      ...(step === undefined ? {} : { step: Number(step) }),
      ...(steps === undefined ? {} : { steps: Number(steps) })
    }
  }
  return { value }
}

const walkForwardOf = (text: string) => {
  const [mode, ...numbers] = text.split(":")
  if (numbers.length !== 3 || !numbers.every((n) => numeric.test(n))) {
    return { mistake: `is MODE:FOLDS:IN_SAMPLE_BARS:OUT_OF_SAMPLE_BARS; got '${text}'` }
  }
  const [folds, inSample, outOfSample] = numbers.map(Number)
  return { value: { mode, folds, in_sample_bars: inSample, out_of_sample_bars: outOfSample } }
}

// The defaults shown are `backtestDefaults`' (a test holds them to it).
const commands = {
  backtest: {
    synopsis: "backtest --program FILE (--symbol SYMBOL | --symbols A,B,...) --from TIME --to TIME [flags]",
    summary: "run a backtest in this process, no server needed (on an in-memory database unless --data-dir)",
    flags: [
      ...backtestFlags,
      { name: "json", help: "print the backtest as JSON (for scripts) instead of the summary" }
    ]
  },
  optimize: {
    synopsis:
      "optimize --program FILE (--symbol SYMBOL | --symbols A,B,...) --from TIME --to TIME --search KIND --space SPEC [flags]",
    summary: "search a program's declared parameters in this process, no server needed (see docs/research.md)",
    flags: [
      ...backtestFlags.filter((f) => f.name !== "json"),
      { name: "search", value: "KIND", help: "grid, random or tpe", required: true },
      {
        name: "space",
        value: "SPEC",
        help: "the searched parameters: NAME=MIN..MAX[:STEP] (ints), NAME=MIN..MAX[/STEPS] (floats), " +
          "NAME=A|B|C (choices) or NAME (its declared range), comma-separated",
        parse: spaceOf,
        required: true
      },
      { name: "objective", value: "METRIC", help: "sharpe, sortino, calmar, total_return or profit_factor (sharpe)" },
      {
        name: "trials",
        value: "N",
        help: "trials of random and tpe, the most a grid may have (100)",
        field: "budget",
        parse: (value) => numeric.test(value) ? { value: { trials: Number(value) } } : { mistake: "must be a number" }
      },
      { name: "seed", value: "N", help: "seeds random and tpe (1)", number: true },
      {
        name: "constraints",
        value: "SPEC",
        help: "min_trades=N,max_drawdown_percent=P: trials breaking one have no objective",
        parse: (value) => pairsOf(value, ["min_trades", "max_drawdown_percent"])
      },
      {
        name: "walk-forward",
        value: "SPEC",
        help: "MODE:FOLDS:IN_SAMPLE_BARS:OUT_OF_SAMPLE_BARS, e.g. rolling:4:4000:1000",
        parse: walkForwardOf
      },
      { name: "json", help: "print the optimisation as JSON (for scripts) instead of the summary" }
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
  const unparsed: Array<string> = []
  for (const flag of command.flags) {
    const value = values.get(flag.name) ?? defaults[flag.name]
    if (typeof value !== "string") continue
    const parsed = flag.parse?.(value)
    if (parsed !== undefined && "mistake" in parsed) unparsed.push(`--${flag.name} ${parsed.mistake}`)
    input[fieldOf(flag)] = parsed !== undefined
      ? ("value" in parsed ? parsed.value : undefined)
      : flag.number
      ? Number(value)
      : flag.list
      ? value.split(",").map((v) => v.trim())
      : value
  }
  if (unparsed.length > 0) return { _tag: "Left", left: unparsed.join("; ") }
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
/** A program run in this process: its source, and where the run is kept. */
interface ProgramRun {
  readonly program: string
  readonly language: string | undefined
  readonly dataDir: string | undefined
  readonly json: boolean
}

export type Plan =
  | (ProgramRun & { readonly _tag: "backtest"; readonly request: BacktestRequest })
  | (ProgramRun & { readonly _tag: "optimize"; readonly request: OptimizationRequest })
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
  // `effect/Schema`, not the index: a dynamic import of the whole index made the bundle's code
  // splitting put every Effect module (and fast-check) in a chunk the server loads at start.
  const needed = name === "backtest" || name === "optimize" || name === "import"
    ? { ...(await contract()), Schema: await import("effect/Schema") }
    : undefined
  const given = read(name, argv)
  const { mistakes, positionals, values } = given
  // The schema says which of its fields are missing; the others (the program, the user) are said here.
  const decoded = new Set(
    needed === undefined
      ? []
      : Object.keys(
        name === "backtest"
          ? needed.BacktestRequest.fields
          : name === "optimize"
          ? needed.OptimizationRequest.fields
          : needed.CandleImportParams.fields
      )
  )
  const required = (commands[name] as Command).flags
    .filter((f) => f.required && !decoded.has(f.field ?? f.name) && !values.has(f.name))
    .map((f) => `--${f.name} is required`)
  switch (name) {
    case "backtest":
    case "optimize": {
      const request = name === "backtest"
        ? decodeFlags(needed!, name, needed!.BacktestRequest, given, { timeframe: "1h" })
        : decodeFlags(needed!, name, needed!.OptimizationRequest, given, { timeframe: "1h" })
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
      const run = {
        program: program!,
        language: text(values, "language"),
        dataDir: text(values, "data-dir"),
        json: values.has("json")
      }
      return {
        _tag: "Ready",
        plan: name === "backtest"
          ? { _tag: "backtest", request: request.right as BacktestRequest, ...run }
          : { _tag: "optimize", request: request.right as OptimizationRequest, ...run }
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
