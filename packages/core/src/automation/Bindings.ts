import { Clock, Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import { type AccountId, leverageCap } from "../accounts/Account.js"
import { type AccountRow, Accounts } from "../accounts/Accounts.js"
import { BiasCheckVerdicts } from "../backtests/BiasCheckVerdicts.js"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { LeverageTooHigh, NotFound } from "../http/Errors.js"
import { invalidField } from "../http/InvalidField.js"
import { pageOf, type Pagination } from "../http/Pagination.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { JobWakeup } from "../jobs/JobWakeup.js"
import { MarketData } from "../market/MarketData.js"
import { resolveParameters } from "../programs/Parameters.js"
import type { ProgramId } from "../programs/Program.js"
import { Programs } from "../programs/Programs.js"
import type { ProgramRow } from "../programs/Programs.js"
import { PoolId } from "../signals/Signal.js"
import { Signals } from "../signals/Signals.js"
import { fromDecodedRow } from "../sql/Columns.js"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import type { CurrentUserShape } from "../users/Authentication.js"
import { ownedBy, type Owner } from "../users/Ownership.js"
import { type Exchange, longerTimeframeIssue } from "../venues/Venue.js"
import { VenueAccounts } from "../venues/VenueAccounts.js"
import {
  AccountPosition,
  Binding,
  bindingDefaults,
  type BindingId,
  BindingList,
  type BindingRequest,
  type BindingUpdate,
  FundingList,
  FundingPayment,
  Order,
  OrderList,
  PositionList,
  Run,
  RunList
} from "./Automation.js"
import { type BindingEdit, type BindingRow, BindingsRepo } from "./BindingsRepo.js"
import { LedgerRepo, type OrderRow } from "./LedgerRepo.js"
import { automationJobKind, decisionsOf, type RunRow, runsFor, RunsRepo } from "./RunsRepo.js"

/** The venue an account trades on: venue1 when enabled for it, venue2 otherwise (as the leverage rule reads it). */
export const accountExchange = (account: Pick<AccountRow, "venue1_enabled">): Exchange =>
  account.venue1_enabled ? "venue1" : "venue2"

/**
 * Whether an account's orders on a venue go to the venue itself (the venue in `http` mode, the
 * account's keys for it, not venue1's paper environment) rather than to the paper ledger.
 */
export const ordersGoToVenue = (
  mode: "simulated" | "http",
  credentials: Option.Option<unknown>,
  account: Pick<AccountRow, "venue1_environment">
) => mode === "http" && Option.isSome(credentials) && account.venue1_environment !== "paper"

/** The highest leverage the account allows: its `max_leverage`, else its venue's cap. */
export const maxLeverageOf = (account: Pick<AccountRow, "venue1_enabled" | "max_leverage">) =>
  account.max_leverage ?? leverageCap[accountExchange(account)]

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

export const toBinding = ({ user_id: _, ...row }: BindingRow) => new Binding(row)

export const toRun = (row: RunRow) =>
  new Run({
    id: row.id,
    binding_id: row.binding_id,
    program_id: row.program_id,
    account_id: row.account_id,
    symbol: row.symbol,
    symbols: row.symbols,
    trigger: row.trigger,
    status: row.status,
    attempts: row.attempts,
    decision: decisionsOf(row)?.[0] ?? null,
    decisions: decisionsOf(row),
    error: row.error,
    created_at: row.created_at,
    started_at: row.started_at,
    finished_at: row.finished_at
  }, fromDecodedRow)

/** An order as the account's orders list it. */
export const toOrder = (
  { user_id: _, idempotency_key: _key, take_profit_price: _tp, stop_loss_price: _sl, trailing_stop: _ts, ...row }:
    OrderRow
) => new Order(row)

/** The next slot of a schedule that starts now; none without a schedule or while disabled. */
const firstSlot = (edit: Pick<BindingEdit, "enabled" | "interval_minutes">, at: Date) =>
  edit.enabled && edit.interval_minutes !== null ? new Date(at.getTime() + edit.interval_minutes * 60_000) : null

/** Bindings of programs to accounts: their rules and ownership, manual runs, and the reads of runs, orders and positions. */
export class Bindings extends Effect.Service<Bindings>()("@trading-platform/core/Bindings", {
  effect: Effect.gen(function*() {
    const repo = yield* BindingsRepo
    const runs = yield* RunsRepo
    const ledger = yield* LedgerRepo
    const programs = yield* Programs
    const accounts = yield* Accounts
    const market = yield* MarketData
    const wakeup = yield* JobWakeup
    const signals = yield* Signals
    const verdicts = yield* BiasCheckVerdicts
    const venueAccounts = yield* VenueAccounts
    const { venues: venueOptions } = yield* PlatformConfig

    /** A binding whose orders would reach a venue that is not simulated needs a passed bias check of its program. */
    const liveNeedsCheck = (program: ProgramRow, account: AccountRow) =>
      Effect.gen(function*() {
        const exchange = accountExchange(account)
        const credentials = yield* venueAccounts.credentials(account.id, exchange)
        if (ordersGoToVenue(venueOptions[exchange].mode, credentials, account)) yield* verdicts.requirePassed(program)
      })

    /**
     * The caller's binding of the caller's program, and what `program` reads of the program: 404 when
     * it does not exist or is another program's, 403 when another user's.
     */
    const ofProgram = <P, E>(
      caller: CurrentUserShape,
      programId: ProgramId,
      id: BindingId,
      program: Effect.Effect<P, E>
    ) =>
      Effect.gen(function*() {
        const read = yield* program
        const binding = yield* repo.findById(id).pipe(ownedBy(caller, `Binding ${id}`))
        if (binding.program_id !== programId) return yield* new NotFound({ error: `Binding ${id} not found` })
        return { binding, program: read }
      })
    const ownedWithProgram = (caller: CurrentUserShape, programId: ProgramId, id: BindingId) =>
      ofProgram(caller, programId, id, programs.owned(caller, programId))
    // Without the program's code, for requests that only need the binding.
    const owned = (caller: CurrentUserShape, programId: ProgramId, id: BindingId) =>
      Effect.map(ofProgram(caller, programId, id, programs.check(caller, programId)), ({ binding }) => binding)

    /**
     * The rules of a binding's settings against its account: leverage within the account's,
     * symbols listed on its venue, longer timeframes its bars can build; `params` against the
     * program's declared parameters (each run completes them with the defaults as they are then).
     */
    const checked = (caller: CurrentUserShape, program: ProgramRow, edit: BindingEdit) =>
      Effect.gen(function*() {
        yield* resolveParameters(program.parameters, edit.params)
        const issue = longerTimeframeIssue(edit.timeframe, edit.timeframes)
        if (issue !== undefined) {
          return yield* invalidField(issue.path, issue.message)
        }
        const account = yield* accounts.owned(caller, edit.account_id)
        const max = maxLeverageOf(account)
        if (edit.leverage !== null && (edit.leverage < 1 || edit.leverage > max)) {
          return yield* new LeverageTooHigh({
            error: `Leverage ${edit.leverage} is outside 1..${max}, the account's limit`
          })
        }
        // A pool's triggers start runs with the binding's account, so the pool must be the caller's too.
        yield* Effect.forEach(edit.signal_pool_ids, (id) => signals.ownedPool(caller, PoolId.make(id)))
        const exchange = accountExchange(account)
        yield* market.listed(exchange, edit.symbols)
        if (edit.enabled) yield* liveNeedsCheck(program, account)
        return edit
      })

    const create = (caller: CurrentUserShape, programId: ProgramId, request: BindingRequest) =>
      Effect.gen(function*() {
        const input = { ...bindingDefaults, ...request }
        const program = yield* programs.owned(caller, programId)
        const at = yield* now
        const edit: BindingEdit = {
          account_id: input.account_id,
          symbols: Array.from(new Set(input.symbols)),
          timeframe: input.timeframe,
          timeframes: input.timeframes,
          interval_minutes: input.interval_minutes ?? null,
          signal_pool_ids: Array.from(new Set(input.signal_pool_ids)),
          params: input.params,
          leverage: input.leverage ?? null,
          enabled: input.enabled,
          portfolio: input.portfolio,
          next_run_at: null
        }
        yield* checked(caller, program, edit)
        const row = yield* repo.insert({
          edit: { ...edit, next_run_at: firstSlot(edit, at) },
          user_id: caller.id,
          program_id: programId,
          now: at
        })
        return toBinding(row)
      }).pipe(dieOnStorageFailure, withRequestSpan("Bindings.create", { attributes: { userId: caller.id, programId } }))

    const list = (caller: CurrentUserShape, programId: ProgramId, page: Pagination) =>
      Effect.zipRight(programs.check(caller, programId), repo.listByProgram({ program_id: programId, ...pageOf(page) }))
        .pipe(
          Effect.map((rows) => new BindingList({ bindings: rows.map(toBinding) })),
          dieOnStorageFailure,
          withRequestSpan("Bindings.list", { attributes: { userId: caller.id, programId } })
        )

    const get = (caller: CurrentUserShape, programId: ProgramId, id: BindingId) =>
      owned(caller, programId, id).pipe(
        Effect.map(toBinding),
        dieOnStorageFailure,
        withRequestSpan("Bindings.get", { attributes: { userId: caller.id, bindingId: id } })
      )

    const update = (caller: CurrentUserShape, programId: ProgramId, id: BindingId, input: BindingUpdate) =>
      Effect.gen(function*() {
        const { binding: current, program } = yield* ownedWithProgram(caller, programId, id)
        const edit: BindingEdit = {
          account_id: input.account_id ?? current.account_id,
          symbols: input.symbols === undefined ? current.symbols : Array.from(new Set(input.symbols)),
          timeframe: input.timeframe ?? current.timeframe,
          timeframes: input.timeframes ?? current.timeframes,
          interval_minutes: input.interval_minutes === undefined ? current.interval_minutes : input.interval_minutes,
          signal_pool_ids: input.signal_pool_ids === undefined
            ? current.signal_pool_ids
            : Array.from(new Set(input.signal_pool_ids)),
          params: input.params ?? current.params,
          leverage: input.leverage === undefined ? current.leverage : input.leverage,
          enabled: input.enabled ?? current.enabled,
          portfolio: input.portfolio ?? current.portfolio,
          next_run_at: null
        }
        if (edit.interval_minutes === null && edit.signal_pool_ids.length === 0) {
          return yield* invalidField("interval_minutes", "give interval_minutes, signal_pool_ids, or both")
        }
        yield* checked(caller, program, edit)
        const at = yield* now
        // A schedule that keeps its interval and stays enabled keeps its slot; any other change starts it afresh.
        const keepsSlot = current.enabled && edit.enabled && current.interval_minutes === edit.interval_minutes
        const next_run_at = keepsSlot && current.next_run_at !== null
          ? new Date(current.next_run_at)
          : firstSlot(edit, at)
        return toBinding(yield* repo.update({ id, edit: { ...edit, next_run_at }, now: at }))
      }).pipe(
        dieOnStorageFailure,
        withRequestSpan("Bindings.update", { attributes: { userId: caller.id, bindingId: id } })
      )

    const remove = (caller: CurrentUserShape, programId: ProgramId, id: BindingId) =>
      Effect.zipRight(owned(caller, programId, id), repo.remove(id)).pipe(
        dieOnStorageFailure,
        withRequestSpan("Bindings.remove", { attributes: { userId: caller.id, bindingId: id } })
      )

    /** Queues the binding's runs now (one per symbol, or one for a portfolio), whatever the schedule; answers them. */
    const runNow = (caller: CurrentUserShape, programId: ProgramId, id: BindingId) =>
      Effect.gen(function*() {
        const { binding, program } = yield* ownedWithProgram(caller, programId, id)
        yield* liveNeedsCheck(program, yield* accounts.owned(caller, binding.account_id))
        const at = yield* now
        const queued = yield* runs.enqueue(
          runsFor(binding, "manual", (symbol) => `manual:${binding.id}:${symbol}:${randomUUID()}`),
          at
        )
        yield* wakeup.wake(automationJobKind)
        return new RunList({ runs: queued.map(toRun) })
      }).pipe(
        dieOnStorageFailure,
        withRequestSpan("Bindings.runNow", { attributes: { userId: caller.id, bindingId: id } })
      )

    const listRuns = (caller: CurrentUserShape, programId: ProgramId, id: BindingId, page: Pagination) =>
      Effect.zipRight(owned(caller, programId, id), runs.listByBinding({ binding_id: id, ...pageOf(page) })).pipe(
        Effect.map((rows) => new RunList({ runs: rows.map(toRun) })),
        dieOnStorageFailure,
        withRequestSpan("Bindings.listRuns", { attributes: { userId: caller.id, bindingId: id } })
      )

    const listOrders = (caller: Owner, accountId: AccountId, page: Pagination) =>
      Effect.zipRight(accounts.owned(caller, accountId), ledger.orders({ account_id: accountId, ...pageOf(page) }))
        .pipe(
          Effect.map((rows) => new OrderList({ orders: rows.map(toOrder) })),
          dieOnStorageFailure,
          withRequestSpan("Bindings.listOrders", { attributes: { userId: caller.id, accountId } })
        )

    const listPositions = (caller: Owner, accountId: AccountId, page: Pagination) =>
      Effect.zipRight(accounts.owned(caller, accountId), ledger.positions({ account_id: accountId, ...pageOf(page) }))
        .pipe(
          Effect.map((rows) =>
            new PositionList({
              positions: rows.map((p) =>
                new AccountPosition({
                  ...p,
                  protected_at_venue: p.venue_protection !== null && p.venue_protection.length > 0
                })
              )
            })
          ),
          dieOnStorageFailure,
          withRequestSpan("Bindings.listPositions", { attributes: { userId: caller.id, accountId } })
        )

    const listFunding = (caller: CurrentUserShape, accountId: AccountId, page: Pagination) =>
      Effect.zipRight(accounts.owned(caller, accountId), ledger.funding({ account_id: accountId, ...pageOf(page) }))
        .pipe(
          Effect.map((rows) => new FundingList({ funding: rows.map((f) => new FundingPayment(f)) })),
          dieOnStorageFailure,
          withRequestSpan("Bindings.listFunding", { attributes: { userId: caller.id, accountId } })
        )

    return {
      create,
      list,
      get,
      update,
      remove,
      runNow,
      listRuns,
      listOrders,
      listPositions,
      listFunding
    } as const
  })
}) {}
