import { Clock, Effect, Layer, Option } from "effect"
import { type AccountRow, Accounts } from "../accounts/Accounts.js"
import { resolveParameters } from "../programs/Parameters.js"

import { alignBars } from "../backtests/AlignedBars.js"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { Forbidden, NotFound } from "../http/Errors.js"
import { JobFailed, runJobWorkers } from "../jobs/JobWorkers.js"
import { MarketData } from "../market/MarketData.js"
import { Programs } from "../programs/Programs.js"
import type { Decision } from "../sandbox/Decision.js"
import { compileProgram } from "../sandbox/ProgramSource.js"
import { candleWindow } from "../sandbox/SandboxLimits.js"
import type { Held } from "../trading/Ledger.js"
import type { Exchange } from "../venues/Venue.js"
import { accountExchange } from "./Bindings.js"
import { type BindingRow, BindingsRepo } from "./BindingsRepo.js"
import { DecisionOrders } from "./DecisionOrders.js"
import { LedgerRepo } from "./LedgerRepo.js"
import { makeDecisionThreads } from "./LiveDecision.js"
import { FinalFailure, OrderPlacement } from "./OrderPlacement.js"
import { automationJobKind, decisionsOf, type RunRow, RunsRepo } from "./RunsRepo.js"

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

/**
 * Executes automation runs on the job mechanism (`jobs/`), a pool of workers per instance like the
 * backtest workers: each claims one run at a time from the database (one per binding at a time,
 * across replicas), renews its lease while it works, and hands the run back when the venue or the
 * database fails. A run:
 *
 * 1. decides: the program is fed the latest closed candles of the binding's timeframe (up to 500)
 *    bar by bar, as a backtest would, with the account's live position and balance, and the
 *    decision at the last bar counts; it is written on the run and in the account's decision log;
 * 2. sizes the order as the backtest engine does, within the account's leverage and cash, and
 *    records it under the run's id, so a run taken over after a crash finds it instead of
 *    deciding again;
 * 3. fills it: on paper against the venue's price, or through the venue's API when the account
 *    has credentials for a venue in http mode; the fill, the cash and the position are one
 *    transaction, and an order the venue may have received is never sent twice.
 *
 * A program that throws, exceeds its caps or answers garbage fails the run at once, never retried.
 */
export const AutomationRunsLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const { automation: options, sandbox } = yield* PlatformConfig
    const runs = yield* RunsRepo
    const bindings = yield* BindingsRepo
    const ledger = yield* LedgerRepo
    const accounts = yield* Accounts
    const programs = yield* Programs
    const placement = yield* OrderPlacement
    const orders = yield* DecisionOrders
    const market = yield* MarketData
    const threads = yield* makeDecisionThreads(sandbox, options.concurrency)

    const found = (what: string) => <A>(option: Option.Option<A>): Effect.Effect<A, FinalFailure> =>
      Option.isSome(option)
        ? Effect.succeed(option.value)
        : Effect.fail(new FinalFailure({ message: `${what} no longer exists` }))

    /** The run's program or account, read as its owner: gone (or no longer the owner's) fails the run for good. */
    const gone = <A, E, R>(self: Effect.Effect<A, E | NotFound | Forbidden, R>) =>
      Effect.catchIf(
        self,
        (e): e is NotFound | Forbidden => e instanceof NotFound || e instanceof Forbidden,
        (e) => Effect.fail(new FinalFailure({ message: e.error }))
      )

    /**
     * The program's decisions at the last closed bar, one per symbol of the run, in a thread of its
     * own (see `makeDecisionThreads`): it is fed each symbol's latest closed candles, aligned as a
     * backtest's, with the account's positions in them and its balance.
     */
    const decide = (
      run: RunRow,
      binding: BindingRow,
      account: AccountRow,
      held: ReadonlyArray<Held | null>,
      exchange: Exchange
    ) =>
      Effect.gen(function*() {
        const program = yield* programs.owned({ id: run.user_id }, run.program_id).pipe(gone)
        const code = yield* compileProgram(program.code, program.language)
        // The program may have changed its declaration since the binding was saved: the run says so.
        const params = yield* resolveParameters(program.parameters, binding.params).pipe(
          Effect.mapError((invalid) =>
            new FinalFailure({ message: `The binding's params no longer fit the program: ${invalid.error}` })
          )
        )
        const candles = yield* Effect.forEach(
          run.symbols,
          (symbol) => market.latest({ _tag: "Venue", exchange }, symbol, binding.timeframe, candleWindow)
        )
        const bars = alignBars(candles, run.symbols.map(() => undefined))
        if (bars === undefined || bars[0]!.length === 0) {
          const missing = run.symbols.filter((_, s) => candles[s]!.length === 0)
          return yield* new FinalFailure({ message: `No closed ${binding.timeframe} candles of ${missing.join(", ")}` })
        }
        return yield* threads.decide({
          run: {
            code,
            symbols: run.symbols,
            timeframe: binding.timeframe,
            timeframes: binding.timeframes,
            params,
            seed: run.id
          },
          bars,
          account: {
            balance: account.current_cash + account.frozen_cash,
            positions: held.map((p) =>
              p === null ? null : { side: p.side, size: p.size, entry_price: p.entry_price, leverage: p.leverage }
            )
          }
        })
      })

    /** Sizes, records and fills the run's order for one symbol, as a backtest would; answers its refusal, if any. */
    const place = (
      run: RunRow,
      binding: BindingRow,
      account: AccountRow,
      exchange: Exchange,
      symbol: string,
      decision: Decision
    ) =>
      Effect.map(
        orders.place(
          {
            run_id: run.id,
            binding_id: binding.id,
            program_id: run.program_id,
            user_id: run.user_id,
            // A portfolio run places an order per symbol, each with a key of its own.
            idempotency_key: `run:${run.idempotency_key}${run.symbols.length === 1 ? "" : `:${symbol}`}`,
            leverage: binding.leverage
          },
          account,
          exchange,
          symbol,
          decision
        ),
        (placed) => placed.refusal
      )

    /**
     * One claimed run, from the decisions to the fills (or from wherever an earlier attempt
     * stopped): the orders go out symbol by symbol in the run's order, each sized against what the
     * ones before it left, as a backtest fills a bar's decisions.
     */
    const execute = (run: RunRow) =>
      Effect.gen(function*() {
        const binding = yield* Effect.flatMap(bindings.findById(run.binding_id), found(`Binding ${run.binding_id}`))
        const account = yield* accounts.owned({ id: run.user_id }, run.account_id).pipe(gone)
        const recorded = yield* Effect.forEach(run.symbols, (symbol) => ledger.orderOfRun({ run_id: run.id, symbol }))
        const placed = recorded.filter(Option.isSome).length
        if (placed < run.symbols.length && !account.is_active) {
          return yield* new FinalFailure({ message: `Account ${account.id} is not active` })
        }
        const exchange = accountExchange(account)
        // Funding due by now is paid before the orders are sized, as a backtest pays it at the bar's open.
        const held = yield* Effect.forEach(run.symbols, (symbol) =>
          Effect.gen(function*() {
            const position = yield* ledger.position({ account_id: account.id, symbol })
            if (Option.isSome(position)) yield* placement.chargeFunding(position.value, yield* now)
            return Option.getOrNull(position)
          }))
        let decisions = decisionsOf(run)
        if (decisions === null) {
          decisions = yield* decide(run, binding, account, held, exchange)
          const at = yield* now
          yield* runs.decided(run, decisions)
          for (const [s, decision] of decisions.entries()) {
            yield* ledger.logDecision({
              account_id: account.id,
              decision_time: at,
              symbol: run.symbols[s]!,
              operation: decision.operation,
              target_portion_of_balance: decision.target_portion_of_balance ?? null,
              leverage: decision.leverage === undefined ? null : Math.round(decision.leverage),
              reason: decision.reason ?? null
            })
          }
        }
        const refusals: Array<string> = []
        for (const [s, symbol] of run.symbols.entries()) {
          const order = recorded[s]!
          const refusal = Option.isSome(order)
            ? yield* placement.settle(order.value)
            : yield* place(run, binding, account, exchange, symbol, decisions[s]!)
          if (refusal !== null) refusals.push(refusal)
        }
        return refusals.length === 0 ? null : refusals.join("; ")
      })

    yield* runJobWorkers({
      kind: automationJobKind,
      queue: runs.queue,
      options,
      // The lease is renewed while the run works; a failure another attempt would repeat fails it for good.
      run: (row, lease) =>
        lease.keepAlive(execute(row)).pipe(
          Effect.map((refusal) => ({ refusal })),
          Effect.catchTags({
            FinalFailure: (e) => new JobFailed({ message: e.message }),
            ProgramRunError: (e) => new JobFailed({ message: `Program error (${e.reason}): ${e.message}` }),
            ProgramInvalid: (e) => new JobFailed({ message: `Program does not load: ${e.error}` }),
            UnsupportedLanguage: (e) => new JobFailed({ message: e.error }),
            UnknownSymbol: (e) => new JobFailed({ message: `Unknown symbol: ${e.symbol}` })
          })
        )
    })
  })
)
