import { NodeStream } from "@effect/platform-node"
import * as SqlClient from "@effect/sql/SqlClient"
import {
  BacktestRequest,
  Backtests,
  CandleImportParams,
  DatabaseLive,
  Datasets,
  describeConfigError,
  Operators,
  PlatformConfig,
  PlatformLive,
  Programs,
  Users
} from "@trading-platform/core"
import { ConfigError, ConfigProvider, Effect, Layer, Logger, LogLevel, ParseResult, Schema, Stream } from "effect"
import { randomBytes } from "node:crypto"
import { createReadStream, readFileSync, writeFileSync } from "node:fs"
import { basename } from "node:path"
import { parseArgs, type ParseArgsConfig } from "node:util"
import { openApiDocument } from "../docs/OpenApiDocument.js"
import { lineChart, progressBar, table } from "./TerminalChart.js"

export const commandUsage = [
  "Usage: trading-platform <command> [flags]",
  "",
  "Commands:",
  "  serve [flags]       run the reference server (the default; see `trading-platform --help`)",
  "  backtest            run a backtest in this process, no server needed:",
  "      --program FILE    the program's source (required)",
  "      --symbol SYMBOL   e.g. BTC (required)",
  "      --from TIME       ISO date-time where the backtest starts (required)",
  "      --to TIME         ISO date-time where it ends (required)",
  "      --timeframe TF    1m 5m 15m 1h 4h 1d (1h)",
  "      --exchange NAME   venue1 or venue2 (venue1)",
  "      --initial-balance N  --fee-rate F  --slippage F  --leverage N",
  "      --language NAME   the program's language (javascript)",
  "      --data-dir DIR    keep the run in this data directory (memory://: nothing kept)",
  "      --json            print the backtest as JSON (for scripts) instead of the summary",
  "  import candles FILE...  import candle files (CSV or zip) into a user's dataset, no server needed:",
  "      --user EMAIL      the dataset's owner, a user of the database (required)",
  "      --name NAME       the dataset's name, used as the exchange dataset:NAME (required)",
  "      --symbol SYMBOL   e.g. BTC (required)",
  "      --timeframe TF    the files' timeframe: 1m 5m 15m 30m 1h 4h 1d (required)",
  "      --venue NAME      venue1 or venue2: whose rules backtests on it follow (venue1)",
  "      --data-dir DIR or --database-url URL  the database (DATA_DIR/DATABASE_URL, else ./.trading-data)",
  "      --json            print the result as JSON",
  "  operator grant|revoke EMAIL  make the user with this e-mail an operator (platform-wide figures), or not:",
  "  operator list       list the operators (flagged here, and named by OPERATOR_EMAILS)",
  "      --data-dir DIR or --database-url URL  the database (DATA_DIR/DATABASE_URL, else ./.trading-data)",
  "  migrate             bring the database (--data-dir DIR or --database-url URL, or DATA_DIR/DATABASE_URL) to the current schema",
  "  openapi [--out FILE] print the OpenAPI document (or write it to FILE)",
  "",
  "Exit codes: 0 success, 1 the command failed, 2 bad usage."
].join("\n")

class Usage extends Error {}

const flags = <const T extends NonNullable<ParseArgsConfig["options"]>>(argv: ReadonlyArray<string>, options: T) => {
  try {
    return parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }).values
  } catch (e) {
    throw new Usage((e as Error).message)
  }
}

/** Settings from flags first, then the environment, then what a one-off command wants by default. */
const providerOf = (values: Record<string, string | undefined>, defaults: Record<string, string>) => {
  const given = new Map(Object.entries(values).filter((e): e is [string, string] => e[1] !== undefined))
  return ConfigProvider.fromMap(given).pipe(
    ConfigProvider.orElse(() => ConfigProvider.fromEnv()),
    ConfigProvider.orElse(() => ConfigProvider.fromMap(new Map(Object.entries(defaults))))
  )
}

/** The API error's own message (`{ error }`), or the failure's message. */
const failureMessage = (e: unknown): string => {
  if (typeof e === "object" && e !== null) {
    if (ConfigError.isConfigError(e)) return `Invalid configuration: ${describeConfigError(e)}`
    if ("error" in e && typeof e.error === "string") return e.error
    if ("message" in e && typeof e.message === "string") return e.message
  }
  return String(e)
}

const run = <A>(effect: Effect.Effect<A, unknown, never>) =>
  Effect.runPromise(
    effect.pipe(
      Logger.withMinimumLogLevel(LogLevel.Warning),
      Effect.as(0),
      Effect.catchAll((e) => Effect.sync(() => (console.error(failureMessage(e)), 1)))
    )
  )

const backtestOptions = {
  program: { type: "string" },
  symbol: { type: "string" },
  from: { type: "string" },
  to: { type: "string" },
  timeframe: { type: "string", default: "1h" },
  exchange: { type: "string" },
  "initial-balance": { type: "string" },
  "fee-rate": { type: "string" },
  slippage: { type: "string" },
  leverage: { type: "string" },
  language: { type: "string" },
  "data-dir": { type: "string" },
  json: { type: "boolean", default: false }
} as const

/**
 * A decoding failure as one sentence per flag: `--timeframe must be one of 1m, 5m, …; got '2h'`
 * rather than one "Expected" line per member of a union. `renamed` maps a field to its flag's name.
 */
const flagIssues = (e: ParseResult.ParseError, renamed: Record<string, string> = {}) => {
  const byFlag = new Map<string, Array<string>>()
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(e)) {
    const field = issue.path.join(".")
    const flag = `--${(renamed[field] ?? field).replaceAll("_", "-")}`
    byFlag.set(flag, [...(byFlag.get(flag) ?? []), issue.message])
  }
  return Array.from(byFlag, ([flag, messages]) => {
    const literals = messages.map((m) => /^Expected "(.*)", actual "(.*)"$/.exec(m))
    return literals.every((m) => m !== null)
      ? `${flag} must be one of ${literals.map((m) => m![1]).join(", ")}; got '${literals[0]![2]}'`
      : `${flag} ${messages.join("; ")}`
  }).join("; ")
}

const numberOf = (value: string | undefined) => value === undefined ? undefined : Number(value)

const backtest = (argv: ReadonlyArray<string>) => {
  const values = flags(argv, backtestOptions)
  for (const name of ["program", "symbol", "from", "to"] as const) {
    if (values[name] === undefined) throw new Usage(`--${name} is required`)
  }
  const json = values.json === true
  const source = readFileSync(values.program!, "utf8")
  const request = Schema.decodeUnknown(BacktestRequest)(
    Object.fromEntries(
      Object.entries({
        symbol: values.symbol,
        timeframe: values.timeframe,
        start: values.from,
        end: values.to,
        exchange: values.exchange,
        initial_balance: numberOf(values["initial-balance"]),
        fee_rate: numberOf(values["fee-rate"]),
        slippage: numberOf(values.slippage),
        leverage: numberOf(values.leverage)
      }).filter(([, value]) => value !== undefined)
    ),
    { errors: "all" }
  )
  const showProgress = !json && process.stderr.isTTY === true

  const program = Effect.gen(function*() {
    const input = yield* Effect.mapError(
      request,
      (e) => new Error(`Invalid backtest: ${flagIssues(e, { start: "from", end: "to" })}`)
    )
    const users = yield* Users
    // The run needs an owner: a user of its own, so nothing is shared with the data dir's other users.
    const name = `cli-${randomBytes(6).toString("hex")}`
    const password = randomBytes(24).toString("base64url")
    yield* users.register({ email: `${name}@localhost`, username: name, password })
    const { session_token: token } = yield* users.login(
      { email: `${name}@localhost`, password },
      "trading-platform cli"
    )
    const caller = yield* users.authenticate(token)
    const created = yield* (yield* Programs).create(caller, {
      name: basename(values.program!),
      code: source,
      ...(values.language === undefined ? {} : { language: values.language })
    })
    const backtests = yield* Backtests
    const submitted = yield* backtests.submit(caller, created.id, input)
    let current = submitted
    while (current.status === "queued" || current.status === "running") {
      if (showProgress) process.stderr.write(`\r${progressBar(current.progress)} ${current.status}`)
      yield* Effect.sleep("100 millis")
      current = yield* backtests.get(caller, submitted.id)
    }
    if (showProgress) process.stderr.write(`\r${progressBar(current.progress)} ${current.status}\n`)
    if (json) console.log(JSON.stringify(current))
    if (current.status !== "completed") {
      return yield* Effect.fail(new Error(`Backtest ${current.status}: ${current.error ?? ""}`))
    }
    if (!json) console.log(summary(current))
  })

  return run(
    program.pipe(
      Effect.provide(PlatformLive.pipe(Layer.provide(PlatformConfig.fromEnv))),
      Effect.withConfigProvider(providerOf(
        { DATA_DIR: values["data-dir"] },
        // A one-off run: no sampling, automation or arena refresh of its own.
        { DATA_DIR: "memory://", SIGNAL_SAMPLER: "false", AUTOMATION_ENABLED: "false" }
      ))
    )
  )
}

type Finished = Effect.Effect.Success<ReturnType<Backtests["get"]>>

const summary = (b: Finished) => {
  const m = b.metrics!
  const money = (n: number) => n.toFixed(2)
  const percent = (n: number) => `${(n * 100).toFixed(2)}%`
  return [
    `Backtest of ${b.symbol} ${b.timeframe} on ${b.exchange}, ${b.start} to ${b.end}`,
    "",
    table([
      ["Initial balance", money(b.initial_balance)],
      ["Final balance", money(b.final_balance!)],
      ["Total PnL", `${money(m.total_pnl)} (${m.total_pnl_percent.toFixed(2)}%)`],
      ["Trades", String(m.total_trades)],
      ["Win rate", percent(m.win_rate)],
      ["Max drawdown", `${m.max_drawdown_percent.toFixed(2)}%`],
      ["Sharpe", m.sharpe.toFixed(2)],
      ["Profit factor", m.profit_factor === null ? "-" : m.profit_factor.toFixed(2)]
    ]),
    "",
    "Equity",
    lineChart(b.equity_curve.map((p) => p.equity))
  ].join("\n")
}

const migrate = (argv: ReadonlyArray<string>) => {
  const values = flags(argv, { "data-dir": { type: "string" }, "database-url": { type: "string" } })
  return run(
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<
        { readonly name: string }
      >`SELECT name FROM trading_platform_migrations ORDER BY migration_id`
      console.log(`Database schema is current: ${rows.length} migrations, the last ${rows.at(-1)?.name ?? "none"}`)
    }).pipe(
      Effect.provide(DatabaseLive.pipe(Layer.provide(PlatformConfig.fromEnv))),
      Effect.withConfigProvider(providerOf({ DATA_DIR: values["data-dir"], DATABASE_URL: values["database-url"] }, {}))
    )
  )
}

const importCandles = (argv: ReadonlyArray<string>) => {
  const [what, ...rest] = argv
  if (what !== "candles") throw new Usage(`import takes candles, as in: import candles FILE...; got '${what ?? ""}'`)
  const parsed = parseArgs({
    args: rest,
    options: {
      user: { type: "string" },
      name: { type: "string" },
      symbol: { type: "string" },
      timeframe: { type: "string" },
      venue: { type: "string", default: "venue1" },
      "data-dir": { type: "string" },
      "database-url": { type: "string" },
      json: { type: "boolean", default: false }
    },
    strict: true,
    allowPositionals: true
  })
  const values = parsed.values
  for (const name of ["user", "name", "symbol", "timeframe"] as const) {
    if (values[name] === undefined) throw new Usage(`--${name} is required`)
  }
  if (parsed.positionals.length === 0) throw new Usage("name at least one candle file to import")
  const params = Schema.decodeUnknown(CandleImportParams)(
    { name: values.name, venue: values.venue, symbol: values.symbol, timeframe: values.timeframe },
    { errors: "all" }
  )
  return run(
    Effect.gen(function*() {
      const input = yield* Effect.mapError(params, (e) => new Error(flagIssues(e)))
      const owner = yield* (yield* Users).ownerByEmail(values.user!)
      const files = Stream.fromIterable(parsed.positionals.map((path) => ({
        name: basename(path),
        bytes: NodeStream.fromReadable<Error, Uint8Array>(
          () => createReadStream(path),
          (e) => new Error(`Cannot read ${path}: ${(e as Error).message}`)
        )
      })))
      const result = yield* (yield* Datasets).importFiles(owner, input, files)
      if (values.json === true) return console.log(JSON.stringify(result))
      const d = result.dataset
      console.log(
        `Imported ${result.imported} bars into dataset ${d.name} (${d.symbol} ${d.timeframe} on ${d.venue}; ` +
          `${d.bars} bars from ${d.first} to ${d.last}); use it as the exchange dataset:${d.name}`
      )
      if (result.rejected > 0) {
        console.log(`${result.rejected} rows were not kept:`)
        for (const p of result.problems) {
          console.log(`  ${p.file === undefined ? "" : `${p.file} `}line ${p.line}: ${p.message}`)
        }
      }
    }).pipe(
      Effect.provide(PlatformLive.pipe(Layer.provide(PlatformConfig.fromEnv))),
      Effect.withConfigProvider(providerOf(
        { DATA_DIR: values["data-dir"], DATABASE_URL: values["database-url"] },
        { SIGNAL_SAMPLER: "false", AUTOMATION_ENABLED: "false", BACKTEST_CONCURRENCY: "0" }
      ))
    )
  )
}

const operator = (argv: ReadonlyArray<string>) => {
  const parsed = (() => {
    try {
      return parseArgs({
        args: [...argv],
        options: { "data-dir": { type: "string" }, "database-url": { type: "string" } },
        strict: true,
        allowPositionals: true
      })
    } catch (e) {
      throw new Usage((e as Error).message)
    }
  })()
  const [action, email, ...extra] = parsed.positionals
  const needsEmail = action === "grant" || action === "revoke"
  if (!(needsEmail || action === "list")) {
    throw new Usage(`operator takes grant EMAIL, revoke EMAIL or list; got '${action ?? ""}'`)
  }
  if (needsEmail ? email === undefined || extra.length > 0 : email !== undefined) {
    throw new Usage(needsEmail ? `operator ${action} takes one e-mail` : "operator list takes no e-mail")
  }
  const values = parsed.values
  return run(
    Effect.gen(function*() {
      const operators = yield* Operators
      if (action === "grant") {
        yield* operators.grant(email!)
        return console.log(`${email} is an operator`)
      }
      if (action === "revoke") {
        yield* operators.revoke(email!)
        const { configured } = yield* operators.list
        return console.log(
          configured.includes(email!.toLowerCase())
            ? `${email} is no longer flagged, but stays an operator while OPERATOR_EMAILS names it`
            : `${email} is no longer an operator`
        )
      }
      const { configured, flagged } = yield* operators.list
      for (const e of flagged) console.log(e)
      for (const e of configured) console.log(`${e} (OPERATOR_EMAILS)`)
    }).pipe(
      Effect.provide(Operators.Default.pipe(Layer.provide(DatabaseLive), Layer.provide(PlatformConfig.fromEnv))),
      Effect.withConfigProvider(providerOf({ DATA_DIR: values["data-dir"], DATABASE_URL: values["database-url"] }, {}))
    )
  )
}

const openapi = (argv: ReadonlyArray<string>) => {
  const { out } = flags(argv, { out: { type: "string" } })
  const text = `${JSON.stringify(openApiDocument(), null, 2)}\n`
  if (out === undefined) process.stdout.write(text)
  else writeFileSync(out, text)
  return Promise.resolve(0)
}

/** Runs one command; answers its exit code (2 with the usage for bad flags). */
export const runCommand = async (
  command: "backtest" | "import" | "migrate" | "openapi" | "operator",
  argv: ReadonlyArray<string>
): Promise<number> => {
  if (argv.includes("--help") || argv.includes("-h")) {
    console.log(commandUsage)
    return 0
  }
  try {
    const commands = { backtest, import: importCandles, migrate, openapi, operator }
    return await commands[command](argv)
  } catch (e) {
    if (e instanceof Usage) {
      console.error(`${e.message}\n\n${commandUsage}`)
      return 2
    }
    console.error(failureMessage(e))
    return 1
  }
}
