import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Option, Schema, Stream } from "effect"
import type { AccountId } from "../accounts/Account.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { RiskEvent, type RiskMode, type RiskRule, type RiskSource } from "../risk/Risk.js"
import { Notifications } from "../sql/Notifications.js"
import { now } from "../time/Now.js"
import { UserId } from "../users/User.js"
import { type Exchange, type Ticker, type VenueFailure, Venues } from "../venues/Venue.js"
import { LedgerRepo, type OrderRow } from "./LedgerRepo.js"
import { type RiskEdit, type RiskEventRow, RiskRepo, type RiskRow } from "./RiskRepo.js"

/** The channel every instance's streams hear mode changes on; the payload is a `RiskNotice` as JSON. */
const channel = "risk_events"

/** A mode change, addressed to the account's owner. */
export const RiskNotice = Schema.Struct({ user_id: UserId, event: RiskEvent })
export type RiskNotice = typeof RiskNotice.Type
const decodeNotice = Schema.decodeUnknownOption(Schema.parseJson(RiskNotice))

/** Why the firewall refused an order: the limit breached, or `mode`. */
export interface RiskRefusal {
  readonly rule: RiskRule
  readonly message: string
}

/** What is recorded as a refused order's `error`: `risk_blocked (rule): message`. */
export const refusalText = (refusal: RiskRefusal) => `risk_blocked (${refusal.rule}): ${refusal.message}`

/** The refusal a recorded order's `error` holds, when the firewall refused it. */
export const refusalOf = (error: string | null): RiskRefusal | undefined => {
  const match = error === null ? null : /^risk_blocked \((\w+)\): (.*)$/s.exec(error)
  return match ? { rule: match[1] as RiskRule, message: match[2]! } : undefined
}

/** Fills a recorded order (`OrderPlacement.settle`), given by its caller so the two do not depend on each other. */
export type Settle = (order: OrderRow) => Effect.Effect<string | null, unknown>

/** How strict a mode is: a rule only ever moves an account to a stricter one. */
const severity: Record<RiskMode, number> = { active: 0, reduce_only: 1, paused: 2, flatten: 3 }

const day = 86_400_000
const startOfDay = (at: Date) => new Date(Math.floor(at.getTime() / day) * day)

const usd = (amount: number) => amount.toFixed(2)

const editOf = (row: RiskRow): RiskEdit => ({
  mode: row.mode,
  resume_at: row.resume_at === null ? null : new Date(row.resume_at),
  reason: row.reason,
  max_position_notional: row.max_position_notional,
  max_total_notional: row.max_total_notional,
  max_leverage: row.max_leverage,
  max_orders_per_minute: row.max_orders_per_minute,
  max_daily_loss: row.max_daily_loss,
  max_drawdown_percent: row.max_drawdown_percent,
  peak_equity: row.peak_equity,
  day_start: row.day_start === null ? null : new Date(row.day_start),
  day_start_equity: row.day_start_equity
})

/** An account valued now: its owner and its equity at the venues' prices. */
export interface Valuation {
  readonly user_id: UserId
  readonly equity: number
  /** The venues' prices it was valued at. */
  readonly marks: ReadonlyMap<Exchange, ReadonlyMap<string, Ticker>>
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/** An account's risk state after the rules of the moment (resume time, the day, the peak, loss and drawdown). */
export interface Assessed {
  readonly edit: RiskEdit
  readonly valuation: Valuation
  readonly updated_at: string
}

export const toEvent = (row: RiskEventRow) => new RiskEvent(row)

/**
 * The risk firewall (issue 33 point 3): every order of a program, an AI trader or a person passes
 * `check` before it is sent or filled (`OrderPlacement.settle` calls it), exits never need to.
 * It values the account (cash + margins + unrealised PnL at the venue's price), raises its stored
 * equity peak, starts its UTC day, and moves its mode when a limit is breached: a drawdown from the
 * peak past `max_drawdown_percent` flattens it, a day's loss past `max_daily_loss` pauses it until
 * the next UTC day, too many orders in a minute pause it for a minute, and an order past
 * `max_leverage` or a notional limit leaves it `reduce_only`. A rule only moves an account to a
 * stricter mode; its owner moves it back (`set`). Each change is logged and announced to the
 * owner's streams on every instance (`events`).
 */
export class RiskFirewall extends Effect.Service<RiskFirewall>()("@trading-platform/core/RiskFirewall", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* RiskRepo
    const ledger = yield* LedgerRepo
    const venues = yield* Venues
    const notifications = yield* Notifications

    /** The account valued at the venues' prices (fetched once per venue); a position without a price counts at its entry. */
    const valuation = (id: AccountId, extra?: Exchange): Effect.Effect<Valuation, VenueFailure> =>
      Effect.gen(function*() {
        const balances = yield* repo.balances(id).pipe(Effect.orDie)
        if (Option.isNone(balances)) return yield* Effect.dieMessage(`Account ${id} not found`)
        const positions = yield* ledger.positions({ account_id: id, limit: 10_000, offset: 0 }).pipe(Effect.orDie)
        const marks = new Map<Exchange, ReadonlyMap<string, Ticker>>()
        const exchanges = new Set(positions.map((p) => p.exchange))
        if (extra !== undefined) exchanges.add(extra)
        for (const exchange of exchanges) marks.set(exchange, yield* venues[exchange].tickers)
        const unrealized = positions.reduce((sum, p) => {
          const mark = marks.get(p.exchange)?.get(p.symbol)?.price ?? p.entry_price
          return sum + (p.side === "long" ? 1 : -1) * p.size * (mark - p.entry_price)
        }, 0)
        return { user_id: balances.value.user_id, equity: balances.value.cash + unrealized, marks }
      })

    /** Writes the row and, when the mode moved, logs the change and announces it (at commit). */
    const write = (
      row: RiskRow,
      user: UserId,
      edit: RiskEdit,
      source: RiskSource,
      at: Date
    ) =>
      Effect.gen(function*() {
        yield* repo.save(row.account_id, edit, at)
        if (edit.mode === row.mode) return
        const event = toEvent(
          yield* repo.insertEvent({
            account_id: row.account_id,
            from_mode: row.mode,
            to_mode: edit.mode,
            reason: edit.reason,
            source,
            created_at: at
          })
        )
        yield* repo.notify(channel, JSON.stringify(Schema.encodeSync(RiskNotice)({ user_id: user, event })))
      })

    /**
     * The rules of the moment on a locked row: a pause whose time has come ends; a new UTC day
     * starts from the equity now; the peak rises to it; a drawdown past the limit flattens, a
     * day's loss past the limit pauses until the next day (a rule only makes the mode stricter).
     */
    const assess = (row: RiskRow, valued: Valuation, at: Date) => {
      const edit: Mutable<RiskEdit> = { ...editOf(row) }
      const equity = valued.equity
      if (edit.mode === "paused" && edit.resume_at !== null && edit.resume_at.getTime() <= at.getTime()) {
        edit.mode = "active"
        edit.resume_at = null
        edit.reason = "the pause's resume time was reached"
      }
      const today = startOfDay(at)
      if (edit.day_start === null || edit.day_start.getTime() < today.getTime()) {
        edit.day_start = today
        edit.day_start_equity = equity
      }
      if (edit.peak_equity === null || equity > edit.peak_equity) edit.peak_equity = equity
      const peak = edit.peak_equity
      const escalate = (mode: RiskMode, reason: string, resume: Date | null) => {
        if (severity[mode] <= severity[edit.mode]) return
        edit.mode = mode
        edit.reason = reason
        edit.resume_at = resume
      }
      if (edit.max_drawdown_percent !== null && peak > 0) {
        const drawdown = ((peak - equity) / peak) * 100
        if (drawdown >= edit.max_drawdown_percent) {
          escalate(
            "flatten",
            `max_drawdown_percent: equity ${usd(equity)} is ${drawdown.toFixed(2)}% below its peak ${usd(peak)} ` +
              `(limit ${edit.max_drawdown_percent}%)`,
            null
          )
        }
      }
      if (edit.max_daily_loss !== null && edit.day_start_equity !== null) {
        const loss = edit.day_start_equity - equity
        if (loss >= edit.max_daily_loss) {
          escalate(
            "paused",
            `max_daily_loss: equity ${usd(equity)} is ${usd(loss)} below the day's start ${
              usd(edit.day_start_equity)
            } ` +
              `(limit ${usd(edit.max_daily_loss)})`,
            new Date(today.getTime() + day)
          )
        }
      }
      return edit
    }

    const changed = (a: RiskEdit, b: RiskEdit) =>
      (Object.keys(a) as Array<keyof RiskEdit>).some((k) => {
        const x = a[k]
        const y = b[k]
        return x instanceof Date && y instanceof Date ? x.getTime() !== y.getTime() : x !== y
      })

    /** Locks the account's row, applies the rules of the moment to `valued`, and writes what changed; answers the row's state. */
    const settleState = (id: AccountId, valued: Valuation, at: Date) =>
      Effect.gen(function*() {
        const row = yield* repo.lock(id, at)
        const edit = assess(row, valued, at)
        const moved = changed(edit, editOf(row))
        if (moved) yield* write(row, valued.user_id, edit, "rule", at)
        return { row, edit, updated_at: moved ? at.toISOString() : row.updated_at }
      })

    /**
     * Values the account and applies the rules of the moment (see `assess`), as the watcher does on
     * every pass and a read of its risk does; answers its state and valuation.
     */
    const mark = (id: AccountId) =>
      Effect.gen(function*() {
        const at = yield* now
        const valued = yield* valuation(id)
        // Read first without a lock: most passes change nothing, and then write nothing.
        const current = yield* repo.find(id).pipe(Effect.orDie)
        if (Option.isSome(current) && !changed(assess(current.value, valued, at), editOf(current.value))) {
          return {
            edit: editOf(current.value),
            valuation: valued,
            updated_at: current.value.updated_at
          } satisfies Assessed
        }
        const { edit, updated_at } = yield* sql.withTransaction(settleState(id, valued, at)).pipe(Effect.orDie)
        return { edit, valuation: valued, updated_at } satisfies Assessed
      }).pipe(withRequestSpan("RiskFirewall.mark", { attributes: { accountId: id } }))

    /**
     * Closes every position of the account with a `flatten` exit (recorded once per position,
     * filled by `settle` as exits are), then, once none is left, pauses it; the drawdown starts
     * again from the equity then. A position that does not close now is tried on the next pass.
     */
    const flatten = (id: AccountId, settle: Settle) =>
      Effect.gen(function*() {
        const at = yield* now
        const positions = yield* ledger.positions({ account_id: id, limit: 10_000, offset: 0 })
        for (const position of positions) {
          yield* Effect.gen(function*() {
            const ticker = (yield* venues[position.exchange].tickers).get(position.symbol)
            const order = yield* ledger.recordFlatten(position, ticker?.price ?? position.entry_price, at)
            if (Option.isSome(order)) yield* settle(order.value)
          }).pipe(
            Effect.catchAllCause((cause) =>
              Effect.logWarning(`The flatten of ${position.symbol} on account ${id} did not settle`, cause)
            )
          )
        }
        const left = yield* ledger.positions({ account_id: id, limit: 1, offset: 0 })
        if (left.length > 0) return
        const valued = yield* valuation(id)
        yield* sql.withTransaction(Effect.gen(function*() {
          const row = yield* repo.lock(id, at)
          if (row.mode !== "flatten") return
          yield* write(
            row,
            valued.user_id,
            {
              ...editOf(row),
              mode: "paused",
              resume_at: null,
              reason: "flattened: every position is closed",
              peak_equity: valued.equity
            },
            "rule",
            at
          )
        }))
      }).pipe(Effect.orDie, withRequestSpan("RiskFirewall.flatten", { attributes: { accountId: id } }))

    /**
     * The firewall's answer to an order of a program, an AI trader or a person before it goes
     * out: null to let it pass, else why not (the account's mode may have moved). An order that
     * shrinks a position without reversing it passes every limit, and `reduce_only`; `paused` and
     * `flatten` let nothing pass. A drawdown breached here flattens the account at once.
     */
    const check = (order: OrderRow, settle: Settle) =>
      Effect.gen(function*() {
        const at = yield* now
        const valued = yield* valuation(order.account_id, order.exchange)
        const price = valued.marks.get(order.exchange)?.get(order.symbol)?.price ?? order.price ?? 0
        const { edit, refusal } = yield* sql.withTransaction(Effect.gen(function*() {
          const { edit, row } = yield* settleState(order.account_id, valued, at)
          const refuse = (rule: RiskRule, message: string, moveTo?: RiskMode, resume: Date | null = null) =>
            Effect.gen(function*() {
              if (moveTo !== undefined && severity[moveTo] > severity[edit.mode]) {
                const next = { ...edit, mode: moveTo, reason: message, resume_at: resume }
                yield* write({ ...row, mode: edit.mode }, valued.user_id, next, "rule", at)
                return { edit: next, refusal: { rule, message } }
              }
              return { edit, refusal: { rule, message } }
            })
          // Recorded under the lock, so the next check counts this order.
          const pass = Effect.as(repo.passed(order.id, at), { edit, refusal: null })
          // The account's exposure by symbol, read under the lock: orders let through and not filled yet
          // count as filled, as the lock serialises checks but not fills, so orders checked at once pass as
          // they would one by one. Those first: one that fills between the two reads counts twice, never not at all.
          const inFlight = yield* repo.inFlight({ account_id: order.account_id, except: order.id })
          const positions = yield* ledger.positions({ account_id: order.account_id, limit: 10_000, offset: 0 })
          const markOf = (exchange: Exchange, symbol: string) => valued.marks.get(exchange)?.get(symbol)?.price
          const exposure = new Map(positions.map((p) => [p.symbol, {
            signed: (p.side === "long" ? 1 : -1) * p.size,
            price: markOf(p.exchange, p.symbol) ?? p.entry_price
          }]))
          for (const o of inFlight) {
            const known = exposure.get(o.symbol)
            exposure.set(o.symbol, {
              signed: (known?.signed ?? 0) + (o.side === "buy" ? 1 : -1) * o.quantity,
              price: known?.price ?? markOf(o.exchange, o.symbol) ?? price
            })
          }
          const held = exposure.get(order.symbol)?.signed ?? 0
          const sign = order.side === "buy" ? 1 : -1
          const reducing = held !== 0 && Math.sign(held) !== sign && order.quantity <= Math.abs(held) + 1e-12
          // A mode this check moved to names the limit that moved it.
          const moved = edit.mode !== row.mode
            ? /^(max_\w+):/.exec(edit.reason ?? "")?.[1] as RiskRule | undefined
            : undefined
          if (edit.mode === "paused") {
            const until = edit.resume_at === null ? "" : ` until ${edit.resume_at.toISOString()}`
            return yield* refuse(moved ?? "mode", `the account is paused${until} (${edit.reason ?? "set by hand"})`)
          }
          if (edit.mode === "flatten") {
            return yield* refuse(moved ?? "mode", `the account is being flattened (${edit.reason ?? "set by hand"})`)
          }
          if (reducing) return yield* pass
          if (edit.mode === "reduce_only") {
            return yield* refuse(
              "mode",
              `the account is reduce_only (${edit.reason ?? "set by hand"}): only orders that shrink a position pass`
            )
          }
          if (edit.max_leverage !== null && order.leverage > edit.max_leverage) {
            return yield* refuse(
              "max_leverage",
              `max_leverage: leverage ${order.leverage} is above the limit ${edit.max_leverage}`,
              "reduce_only"
            )
          }
          if (edit.max_orders_per_minute !== null) {
            const recent = yield* repo.ordersSince(order.account_id, new Date(at.getTime() - 60_000), order.id)
            if (recent >= edit.max_orders_per_minute) {
              return yield* refuse(
                "max_orders_per_minute",
                `max_orders_per_minute: ${recent} orders in the last minute reach the limit ${edit.max_orders_per_minute}`,
                "paused",
                new Date(at.getTime() + 60_000)
              )
            }
          }
          const after = held + sign * order.quantity
          const notional = Math.abs(after) * price
          if (edit.max_position_notional !== null && notional > edit.max_position_notional) {
            return yield* refuse(
              "max_position_notional",
              `max_position_notional: ${order.symbol} would be ${usd(notional)} (limit ${
                usd(edit.max_position_notional)
              })`,
              "reduce_only"
            )
          }
          const total = Array.from(exposure).reduce(
            (sum, [symbol, e]) => sum + (symbol === order.symbol ? 0 : Math.abs(e.signed) * e.price),
            0
          ) + notional
          if (edit.max_total_notional !== null && total > edit.max_total_notional) {
            return yield* refuse(
              "max_total_notional",
              `max_total_notional: all positions would be ${usd(total)} (limit ${usd(edit.max_total_notional)})`,
              "reduce_only"
            )
          }
          return yield* pass
        })).pipe(Effect.orDie)
        if (edit.mode === "flatten") yield* flatten(order.account_id, settle)
        return refusal
      }).pipe(withRequestSpan("RiskFirewall.check", { attributes: { accountId: order.account_id, orderId: order.id } }))

    /**
     * One watcher pass: values each account with positions, or flattening, or paused until a time
     * now past (raising its peak, starting its day, breaching its loss and drawdown limits), and
     * flattens those in `flatten`. An account that fails (its venue down) is logged and tried next pass.
     */
    const watch = (settle: Settle) =>
      Effect.gen(function*() {
        for (const id of yield* repo.due(yield* now).pipe(Effect.orDie)) {
          yield* Effect.gen(function*() {
            const { edit } = yield* mark(id)
            if (edit.mode === "flatten") yield* flatten(id, settle)
          }).pipe(
            Effect.catchAllCause((cause) => Effect.logWarning(`The risk of account ${id} was not checked`, cause))
          )
        }
      }).pipe(withRequestSpan("RiskFirewall.watch"))

    /**
     * Sets limits and/or the mode by hand, on the row as the rules leave it now. `active` restarts
     * the drawdown and the day's loss from the equity now, so a breach that was acted on does not
     * move the account straight back; `flatten` closes every position (with `settle`), then pauses.
     */
    const set = (
      id: AccountId,
      change: {
        readonly mode?: RiskMode | undefined
        readonly resume_at?: Date | null | undefined
        readonly limits?: { readonly [K in keyof RiskEdit]?: RiskEdit[K] | undefined } | undefined
      },
      settle: Settle
    ) =>
      Effect.gen(function*() {
        const at = yield* now
        const valued = yield* valuation(id)
        const edit = yield* sql.withTransaction(Effect.gen(function*() {
          const { edit, row } = yield* settleState(id, valued, at)
          const next: Mutable<RiskEdit> = { ...edit }
          for (const [key, value] of Object.entries(change.limits ?? {})) {
            if (value !== undefined) Object.assign(next, { [key]: value })
          }
          if (change.mode !== undefined) {
            next.mode = change.mode
            next.reason = "set by hand"
            next.resume_at = change.mode === "paused" ? change.resume_at ?? null : null
            if (change.mode === "active") {
              next.peak_equity = valued.equity
              next.day_start_equity = valued.equity
            }
          } else if (change.resume_at !== undefined && edit.mode === "paused") {
            next.resume_at = change.resume_at
          }
          yield* write({ ...row, mode: edit.mode }, valued.user_id, next, "manual", at)
          return next
        })).pipe(Effect.orDie)
        if (edit.mode === "flatten") yield* flatten(id, settle)
      }).pipe(withRequestSpan("RiskFirewall.set", { attributes: { accountId: id } }))

    /** The account's limits, mode and equity now, after the rules of the moment. */
    const state = (id: AccountId) =>
      Effect.map(mark(id), ({ edit, updated_at, valuation }) => ({ edit, equity: valuation.equity, updated_at }))

    const events = (id: AccountId, page: { readonly limit: number; readonly offset: number }) =>
      Effect.map(repo.events({ account_id: id, ...page }), (rows) => rows.map(toEvent))

    /** Every mode change of every account, on whichever instance it happened, from when the stream starts. */
    const changes: Stream.Stream<RiskNotice> = notifications.listen(channel).pipe(
      Stream.orDie,
      Stream.filterMap(decodeNotice)
    )

    return { check, watch, mark, flatten, set, state, events, changes } as const
  })
}) {}
