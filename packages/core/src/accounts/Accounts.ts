import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { Conflict, LeverageTooHigh } from "../http/Errors.js"
import { pageOf, type Pagination } from "../http/Pagination.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { Secrets } from "../secrets/Secrets.js"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import { now } from "../time/Now.js"
import type { CurrentUserShape } from "../users/Authentication.js"
import { ownedBy, type Owner } from "../users/Ownership.js"
import {
  Account,
  type AccountCreate,
  type AccountId,
  type AccountUpdate,
  leverageCap,
  type Venue1Environment
} from "./Account.js"
import { type AccountEdit, type AccountRow, AccountsRepo, editOf } from "./AccountsRepo.js"
import { tradingDefaults } from "./TradingDefaults.js"

export type { AccountRow }

/** A new leverage pair for an account; an absent value keeps the current one. */
export interface LeverageChange {
  readonly max_leverage?: number | undefined
  readonly default_leverage?: number | undefined
}

export const toAccount = ({ api_key_sealed, ...row }: AccountRow) =>
  new Account({ ...row, has_api_key: api_key_sealed !== null })

/** The leverage rule: `1 <= default_leverage <= max_leverage <= cap` of the account's venue (venue1 when enabled). */
export const checkLeverage = (edit: Pick<AccountEdit, "default_leverage" | "max_leverage" | "venue1_enabled">) => {
  const venue = edit.venue1_enabled ? "venue1" : "venue2"
  const cap = leverageCap[venue]
  const { default_leverage: low, max_leverage: high } = edit
  const ok = (low === null || low >= 1) && (high === null || (high >= 1 && high <= cap)) &&
    (low === null || low <= (high ?? cap))
  return ok ? Effect.void : Effect.fail(
    new LeverageTooHigh({
      error: `Leverage must satisfy 1 <= default_leverage <= max_leverage <= ${cap} on ${venue}`
    })
  )
}

// Absent keeps the current value; null clears a nullable field, and keeps a required one.
const pick = <A>(next: A | null | undefined, current: A): A => next ?? current
const pickNullable = <A>(next: A | null | undefined, current: A | null): A | null => next === undefined ? current : next

/** Trading accounts: ownership, the leverage rule, and the api key sealed at rest. */
export class Accounts extends Effect.Service<Accounts>()("@trading-platform/core/Accounts", {
  effect: Effect.gen(function*() {
    const repo = yield* AccountsRepo
    const secrets = yield* Secrets
    const sql = yield* SqlClient.SqlClient

    // Bound to the account's row: a sealed key copied to another account does not open there.
    const seal = (id: AccountId, key: string | null) =>
      key === null ? null : secrets.seal(key, { table: "accounts", column: "api_key_sealed", row: String(id) })

    /** The caller's (or a run's owner's) account: 404 when it does not exist, 403 when it is another user's. */
    const owned = (caller: Owner, id: AccountId) =>
      repo.findById(id).pipe(ownedBy(caller, `Account ${id}`), dieOnStorageFailure)

    const create = (caller: CurrentUserShape, input: AccountCreate) =>
      Effect.gen(function*() {
        const edit: AccountEdit = {
          name: input.name,
          is_active: true,
          show_on_dashboard: true,
          venue1_enabled: input.venue1_enabled ?? false,
          avatar_preset_id: null,
          base_url: input.base_url ?? null,
          model: input.model ?? null,
          default_leverage: input.default_leverage ?? null,
          max_leverage: input.max_leverage ?? null,
          venue1_environment: input.venue1_environment ?? null,
          margin_mode: input.margin_mode ?? "isolated",
          api_key_sealed: null
        }
        yield* checkLeverage(edit)
        const at = yield* now
        const row = yield* repo.insert({
          ...edit,
          user_id: caller.id,
          account_type: input.account_type ?? "AI",
          initial_capital: input.initial_capital ?? tradingDefaults.initialBalance,
          now: at
        })
        // The key is sealed to the row, whose id the insert gave.
        const apiKey = input.api_key ?? null
        if (apiKey === null) return toAccount(row)
        return toAccount(
          yield* repo.update({ id: row.id, edit: { ...edit, api_key_sealed: seal(row.id, apiKey) }, now: at })
        )
      }).pipe(
        sql.withTransaction,
        dieOnStorageFailure,
        withRequestSpan("Accounts.create", { attributes: { userId: caller.id } })
      )

    const list = (caller: CurrentUserShape, page: Pagination) =>
      repo.listByUser({ user_id: caller.id, ...pageOf(page) }).pipe(
        Effect.map((rows) => rows.map(toAccount)),
        dieOnStorageFailure,
        withRequestSpan("Accounts.list", { attributes: { userId: caller.id } })
      )

    const get = (caller: CurrentUserShape, id: AccountId) =>
      owned(caller, id).pipe(Effect.map(toAccount), withRequestSpan("Accounts.get", { attributes: { id } }))

    // The row is locked from the read to the write: concurrent updates apply one after the other,
    // each checking the leverage rule against what the previous one wrote.
    const update = (caller: CurrentUserShape, id: AccountId, input: AccountUpdate) =>
      Effect.gen(function*() {
        const current = yield* repo.findByIdForUpdate(id).pipe(ownedBy(caller, `Account ${id}`))
        const edit: AccountEdit = {
          name: pick(input.name, current.name),
          is_active: pick(input.is_active, current.is_active),
          show_on_dashboard: pick(input.show_on_dashboard, current.show_on_dashboard),
          venue1_enabled: pick(input.venue1_enabled, current.venue1_enabled),
          avatar_preset_id: pickNullable(input.avatar_preset_id, current.avatar_preset_id),
          base_url: pickNullable(input.base_url, current.base_url),
          model: pickNullable(input.model, current.model),
          default_leverage: pickNullable(input.default_leverage, current.default_leverage),
          max_leverage: pickNullable(input.max_leverage, current.max_leverage),
          venue1_environment: pickNullable(input.venue1_environment, current.venue1_environment),
          margin_mode: pick(input.margin_mode, current.margin_mode),
          api_key_sealed: input.api_key === undefined ? current.api_key_sealed : seal(id, input.api_key)
        }
        yield* checkLeverage(edit)
        // Venues refuse it too: the liquidation prices of open positions would move under them.
        if (edit.margin_mode !== current.margin_mode && current.frozen_cash > 0) {
          return yield* new Conflict({ error: "The margin mode cannot change while the account has open positions" })
        }
        return toAccount(yield* repo.update({ id, edit, now: yield* now }))
      }).pipe(sql.withTransaction, dieOnStorageFailure, withRequestSpan("Accounts.update", { attributes: { id } }))

    const remove = (caller: CurrentUserShape, id: AccountId) =>
      owned(caller, id).pipe(
        Effect.zipRight(repo.remove(id)),
        dieOnStorageFailure,
        withRequestSpan("Accounts.remove", { attributes: { id } })
      )

    /** The account's fields with `change` applied, once they pass the leverage rule. */
    const withLeverage = (account: AccountRow, change: LeverageChange) => {
      const edit = editOf(account)
      const next = {
        ...edit,
        max_leverage: change.max_leverage ?? edit.max_leverage,
        default_leverage: change.default_leverage ?? edit.default_leverage
      }
      return Effect.as(checkLeverage(next), next)
    }

    /** Stores `change` on the account (inside the caller's transaction, if any). */
    const setLeverage = (account: AccountRow, change: LeverageChange) =>
      Effect.gen(function*() {
        const edit = yield* withLeverage(account, change)
        yield* repo.update({ id: account.id, edit, now: yield* now })
      }).pipe(withRequestSpan("Accounts.setLeverage", { attributes: { id: account.id } }))

    /** Records the environment of the account's venue1 wallet (inside the caller's transaction, if any). */
    const setVenue1Environment = (account: AccountRow, environment: typeof Venue1Environment.Type) =>
      Effect.gen(function*() {
        const edit = { ...editOf(account), venue1_environment: environment }
        yield* repo.update({ id: account.id, edit, now: yield* now })
      }).pipe(withRequestSpan("Accounts.setVenue1Environment", { attributes: { id: account.id } }))

    return { owned, create, list, get, update, remove, withLeverage, setLeverage, setVenue1Environment } as const
  }),
  dependencies: [AccountsRepo.Default, Secrets.Default]
}) {}
