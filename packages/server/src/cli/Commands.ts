import { NodeStream } from "@effect/platform-node"
import * as SqlClient from "@effect/sql/SqlClient"
import {
  Backtests,
  DatabaseLive,
  Datasets,
  describeConfigError,
  Operators,
  Optimizations,
  PlatformConfig,
  PlatformLive,
  Programs,
  timeframeMillis,
  Users
} from "@trading-platform/core"
import { ConfigError, ConfigProvider, Effect, Layer, Logger, LogLevel, Stream } from "effect"
import { randomBytes } from "node:crypto"
import { createReadStream, readFileSync, writeFileSync } from "node:fs"
import { basename } from "node:path"
import { openApiDocument } from "../docs/OpenApiDocument.js"
import type { Plan } from "./CommandFlags.js"
import { lineChart, progressBar, table } from "./TerminalChart.js"

// Runs a command whose flags `CommandFlags.ts` has checked: only now is the platform loaded.

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

type Finished = Effect.Effect.Success<ReturnType<Backtests["get"]>>

const duration = (ms: number) => {
  const s = Math.ceil(ms / 1000)
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`
}

/**
 * The backtest's progress on stderr: a bar redrawn in place on a terminal, else a line at each
 * tenth; each with the bars done of all, and the time left at the pace since it began running.
 */
const progressReporter = (terminal: boolean) => {
  let origin: { readonly at: number; readonly progress: number } | undefined
  let shownStep = -1
  return (b: Finished, final = false) => {
    const total = Math.max(1, Math.round((Date.parse(b.end) - Date.parse(b.start)) / timeframeMillis[b.timeframe]))
    const now = Date.now()
    if (origin === undefined && b.status === "running") origin = { at: now, progress: b.progress }
    const pace = origin === undefined || b.progress <= origin.progress
      ? undefined
      : (now - origin.at) / (b.progress - origin.progress)
    const state = b.status !== "running"
      ? `, ${b.status}`
      : pace === undefined
      ? ""
      : `, ${duration((1 - b.progress) * pace)} left`
    const line = `${progressBar(b.progress)} ${Math.round(b.progress * total)}/${total} bars${state}`
    if (terminal) return process.stderr.write(`\r${line}\x1b[K${final ? "\n" : ""}`)
    const step = Math.floor(b.progress * 10)
    if (final || step > shownStep) {
      shownStep = step
      process.stderr.write(`${line}\n`)
    }
  }
}

/** The program of a run in this process, saved by a user of its own (so nothing is shared with the data dir's other users). */
const ownProgram = (plan: Extract<Plan, { _tag: "backtest" | "optimize" }>) =>
  Effect.gen(function*() {
    const source = yield* Effect.try(() => readFileSync(plan.program, "utf8"))
    const users = yield* Users
    const name = `cli-${randomBytes(6).toString("hex")}`
    const password = randomBytes(24).toString("base64url")
    yield* users.register({ email: `${name}@localhost`, username: name, password })
    const { session_token: token } = yield* users.login(
      { email: `${name}@localhost`, password },
      "trading-platform cli"
    )
    const caller = yield* users.authenticate(token)
    const created = yield* (yield* Programs).create(caller, {
      name: basename(plan.program),
      code: source,
      ...(plan.language === undefined ? {} : { language: plan.language })
    })
    return { caller, program: created.id }
  })

/** Runs a backtest or an optimisation on a platform of this process's own. */
const inProcess = <A>(plan: Extract<Plan, { _tag: "backtest" | "optimize" }>, effect: Effect.Effect<A, unknown, any>) =>
  run(
    effect.pipe(
      Effect.provide(PlatformLive.pipe(Layer.provide(PlatformConfig.fromEnv))),
      Effect.withConfigProvider(providerOf(
        { DATA_DIR: plan.dataDir },
        // A one-off run: no sampling, automation or arena refresh of its own.
        { DATA_DIR: "memory://", SIGNAL_SAMPLER: "false", AUTOMATION_ENABLED: "false" }
      ))
    ) as Effect.Effect<A, unknown, never>
  )

const backtest = (plan: Extract<Plan, { _tag: "backtest" }>) => {
  const report = plan.json ? undefined : progressReporter(process.stderr.isTTY === true)
  return inProcess(
    plan,
    Effect.gen(function*() {
      const { caller, program } = yield* ownProgram(plan)
      const backtests = yield* Backtests
      const submitted = yield* backtests.submit(caller, program, plan.request)
      let current = submitted
      while (current.status === "queued" || current.status === "running") {
        report?.(current)
        yield* Effect.sleep("100 millis")
        current = yield* backtests.get(caller, submitted.id)
      }
      report?.(current, true)
      if (plan.json) console.log(JSON.stringify(current))
      if (current.status !== "completed") {
        return yield* Effect.fail(new Error(`Backtest ${current.status}: ${current.error ?? ""}`))
      }
      if (!plan.json) console.log(summary(current))
    })
  )
}

type Optimized = Effect.Effect.Success<ReturnType<Optimizations["get"]>>

const optimize = (plan: Extract<Plan, { _tag: "optimize" }>) => {
  const terminal = process.stderr.isTTY === true
  let shown = -1
  // Trials done of all on stderr: a bar redrawn in place on a terminal, else a line at each tenth.
  const report = (o: Optimized, final = false) => {
    if (plan.json) return
    const fraction = o.trials_done / Math.max(1, o.trials_total)
    const best = o.best === null ? "" : `, best ${o.best.objective?.toFixed(3)} at ${JSON.stringify(o.best.params)}`
    const line = `${progressBar(fraction)} ${o.trials_done}/${o.trials_total} trials${best}`
    if (terminal) return process.stderr.write(`\r${line}\x1b[K${final ? "\n" : ""}`)
    if (final || Math.floor(fraction * 10) > shown) {
      shown = Math.floor(fraction * 10)
      process.stderr.write(`${line}\n`)
    }
  }
  return inProcess(
    plan,
    Effect.gen(function*() {
      const { caller, program } = yield* ownProgram(plan)
      const optimizations = yield* Optimizations
      const submitted = yield* optimizations.submit(caller, program, plan.request)
      let current = submitted
      while (current.status === "queued" || current.status === "running") {
        report(current)
        yield* Effect.sleep("100 millis")
        current = yield* optimizations.get(caller, program, submitted.id)
      }
      report(current, true)
      if (plan.json) console.log(JSON.stringify(current))
      if (current.status !== "completed") {
        return yield* Effect.fail(new Error(`Optimisation ${current.status}: ${current.error ?? ""}`))
      }
      if (plan.json) return
      const top = yield* optimizations.trials(caller, program, submitted.id, {
        role: "search",
        sort: "objective",
        order: "desc",
        limit: 10,
        offset: 0
      })
      console.log(optimizationSummary(current, top.trials))
    })
  )
}

const optimizationSummary = (
  o: Optimized,
  top: ReadonlyArray<Effect.Effect.Success<ReturnType<Optimizations["trials"]>>["trials"][number]>
) => {
  const r = o.request
  const result = o.result!
  const lines = [
    `Optimisation (${r.search}) of ${(r.symbols ?? [r.symbol]).join(", ")} ${r.timeframe}, ${r.start} to ${r.end}: ` +
    `${o.trials_done} trials${result.stopped === "time" ? ", stopped by the time budget" : ""}`,
    ""
  ]
  if (result.best === null) lines.push("No trial met the constraints.")
  else {
    lines.push(
      table([
        ["Best", JSON.stringify(result.best.params)],
        ["Objective", String(result.best.objective)],
        ["Total PnL", `${result.best.metrics.total_pnl_percent.toFixed(2)}%`],
        ["Trades", String(result.best.metrics.total_trades)],
        ["Max drawdown", `${result.best.metrics.max_drawdown_percent.toFixed(2)}%`],
        ["Sharpe", result.best.metrics.sharpe.toFixed(2)]
      ])
    )
  }
  if (top.length > 0) {
    lines.push("", "Best trials", table(top.map((t) => [JSON.stringify(t.params), String(t.objective)] as const)))
  }
  for (const fold of result.folds) {
    lines.push(
      `Fold ${fold.fold}: in sample ${fold.best?.objective ?? "-"}, out of sample ${
        fold.out_of_sample_objective ?? "-"
      } (${JSON.stringify(fold.best?.params ?? {})})`
    )
  }
  if (result.equity_curve.length > 0) {
    lines.push("", result.walk_forward === null ? "Equity (best)" : "Equity (out of sample, chained)")
    lines.push(lineChart(result.equity_curve.map((p) => p.equity)))
  }
  return lines.join("\n")
}

const summary = (b: Finished) => {
  const m = b.metrics!
  const money = (n: number) => n.toFixed(2)
  const percent = (n: number) => `${(n * 100).toFixed(2)}%`
  return [
    `Backtest of ${b.symbols.join(", ")} ${b.timeframe} on ${b.exchange}, ${b.start} to ${b.end}`,
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

const storageProvider = (plan: { readonly dataDir: string | undefined; readonly databaseUrl: string | undefined }) =>
  providerOf({ DATA_DIR: plan.dataDir, DATABASE_URL: plan.databaseUrl }, {})

const migrate = (plan: Extract<Plan, { _tag: "migrate" }>) =>
  run(
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<
        { readonly name: string }
      >`SELECT name FROM trading_platform_migrations ORDER BY migration_id`
      console.log(`Database schema is current: ${rows.length} migrations, the last ${rows.at(-1)?.name ?? "none"}`)
    }).pipe(
      Effect.provide(DatabaseLive.pipe(Layer.provide(PlatformConfig.fromEnv))),
      Effect.withConfigProvider(storageProvider(plan))
    )
  )

const importCandles = (plan: Extract<Plan, { _tag: "import" }>) =>
  run(
    Effect.gen(function*() {
      const owner = yield* (yield* Users).ownerByEmail(plan.user)
      const files = Stream.fromIterable(plan.files.map((path) => ({
        name: basename(path),
        bytes: NodeStream.fromReadable<Error, Uint8Array>(
          () => createReadStream(path),
          (e) => new Error(`Cannot read ${path}: ${(e as Error).message}`)
        )
      })))
      const result = yield* (yield* Datasets).importFiles(owner, plan.params, files)
      if (plan.json) return console.log(JSON.stringify(result))
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
        { DATA_DIR: plan.dataDir, DATABASE_URL: plan.databaseUrl },
        { SIGNAL_SAMPLER: "false", AUTOMATION_ENABLED: "false", BACKTEST_CONCURRENCY: "0" }
      ))
    )
  )

const operator = (plan: Extract<Plan, { _tag: "operator" }>) =>
  run(
    Effect.gen(function*() {
      const operators = yield* Operators
      const email = plan.email!
      if (plan.action === "grant") {
        yield* operators.grant(email)
        return console.log(`${email} is an operator`)
      }
      if (plan.action === "revoke") {
        yield* operators.revoke(email)
        const { configured } = yield* operators.list
        return console.log(
          configured.includes(email.toLowerCase())
            ? `${email} is no longer flagged, but stays an operator while OPERATOR_EMAILS names it`
            : `${email} is no longer an operator`
        )
      }
      const { configured, flagged } = yield* operators.list
      for (const e of flagged) console.log(e)
      for (const e of configured) console.log(`${e} (OPERATOR_EMAILS)`)
    }).pipe(
      Effect.provide(Operators.Default.pipe(Layer.provide(DatabaseLive), Layer.provide(PlatformConfig.fromEnv))),
      Effect.withConfigProvider(storageProvider(plan))
    )
  )

const openapi = (plan: Extract<Plan, { _tag: "openapi" }>) => {
  const text = `${JSON.stringify(openApiDocument(), null, 2)}\n`
  if (plan.out === undefined) process.stdout.write(text)
  else writeFileSync(plan.out, text)
  return Promise.resolve(0)
}

/** Runs one command, its flags checked (`CommandFlags.checkCommand`); answers its exit code. */
export const runCommand = async (plan: Plan): Promise<number> => {
  try {
    switch (plan._tag) {
      case "backtest":
        return await backtest(plan)
      case "optimize":
        return await optimize(plan)
      case "import":
        return await importCandles(plan)
      case "migrate":
        return await migrate(plan)
      case "operator":
        return await operator(plan)
      case "openapi":
        return await openapi(plan)
    }
  } catch (e) {
    console.error(failureMessage(e))
    return 1
  }
}
