import { Effect } from "effect"
import type { AccountId } from "../accounts/Account.js"
import { Accounts } from "../accounts/Accounts.js"
import { invalidField } from "../http/InvalidField.js"
import { pageOf, type Pagination } from "../http/Pagination.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { AccountRisk, type AccountRiskUpdate, RiskEventList } from "../risk/Risk.js"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import type { CurrentUserShape } from "../users/Authentication.js"
import { OrderPlacement } from "./OrderPlacement.js"
import { RiskFirewall } from "./RiskFirewall.js"

/** An account's risk as its owner reads and sets it: ownership, then the firewall. */
export class RiskSettings extends Effect.Service<RiskSettings>()("@trading-platform/core/RiskSettings", {
  effect: Effect.gen(function*() {
    const accounts = yield* Accounts
    const firewall = yield* RiskFirewall
    const placement = yield* OrderPlacement

    /** The account's risk after the rules of the moment; one they move to `flatten` is flattened first, as the watcher would. */
    const read = (id: AccountId) =>
      Effect.flatMap(firewall.state(id), (state) =>
        state.edit.mode === "flatten"
          ? Effect.zipRight(firewall.flatten(id, placement.settle), firewall.state(id))
          : Effect.succeed(state)).pipe(Effect.map(({ edit, equity, updated_at }) =>
            new AccountRisk({
              account_id: id,
              mode: edit.mode,
              resume_at: edit.resume_at?.toISOString() ?? null,
              reason: edit.reason,
              limits: {
                max_position_notional: edit.max_position_notional,
                max_total_notional: edit.max_total_notional,
                max_leverage: edit.max_leverage,
                max_orders_per_minute: edit.max_orders_per_minute,
                max_daily_loss: edit.max_daily_loss,
                max_drawdown_percent: edit.max_drawdown_percent
              },
              peak_equity: edit.peak_equity ?? equity,
              equity,
              daily_pnl: equity - (edit.day_start_equity ?? equity),
              updated_at
            })
          ))

    const get = (caller: CurrentUserShape, id: AccountId) =>
      Effect.zipRight(accounts.owned(caller, id), read(id)).pipe(
        dieOnStorageFailure,
        withRequestSpan("RiskSettings.get", { attributes: { userId: caller.id, accountId: id } })
      )

    const update = (caller: CurrentUserShape, id: AccountId, input: AccountRiskUpdate) =>
      Effect.gen(function*() {
        yield* accounts.owned(caller, id)
        if (input.resume_at != null && input.mode !== undefined && input.mode !== "paused") {
          return yield* invalidField("resume_at", "goes with mode paused")
        }
        yield* firewall.set(id, {
          ...(input.mode === undefined ? {} : { mode: input.mode }),
          ...(input.resume_at === undefined
            ? {}
            : { resume_at: input.resume_at === null ? null : new Date(input.resume_at) }),
          ...(input.limits === undefined ? {} : { limits: input.limits })
        }, placement.settle)
        return yield* read(id)
      }).pipe(
        dieOnStorageFailure,
        withRequestSpan("RiskSettings.update", { attributes: { userId: caller.id, accountId: id } })
      )

    const events = (caller: CurrentUserShape, id: AccountId, page: Pagination) =>
      Effect.zipRight(accounts.owned(caller, id), firewall.events(id, pageOf(page))).pipe(
        Effect.map((events) => new RiskEventList({ events })),
        dieOnStorageFailure,
        withRequestSpan("RiskSettings.events", { attributes: { userId: caller.id, accountId: id } })
      )

    return { get, update, events } as const
  })
}) {}
