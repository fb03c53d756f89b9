import { HttpApiBuilder } from "@effect/platform"
import { CurrentUser, TradingApi, VenueAccounts } from "@trading-platform/core"
import { Effect } from "effect"

export const VenueAccountsHttpLive = HttpApiBuilder.group(
  TradingApi,
  "venueAccounts",
  (handlers) =>
    Effect.gen(function*() {
      const venueAccounts = yield* VenueAccounts
      return handlers
        .handle(
          "storeWallet",
          ({ path, payload }) =>
            Effect.flatMap(CurrentUser, (caller) => venueAccounts.storeWallet(caller, path.account_id, payload))
        )
        .handle(
          "testWallet",
          ({ path }) => Effect.flatMap(CurrentUser, (caller) => venueAccounts.testWallet(caller, path.account_id))
        )
        .handle(
          "setupVenue2",
          ({ path, payload }) =>
            Effect.flatMap(CurrentUser, (caller) => venueAccounts.setupVenue2(caller, path.account_id, payload))
        )
    })
)
