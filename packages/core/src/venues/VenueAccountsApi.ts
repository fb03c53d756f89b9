import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { AccountPath } from "../accounts/Account.js"
import { ApiError } from "../http/Errors.js"
import { strictBody } from "../http/StrictBody.js"
import { Authentication } from "../users/Authentication.js"
import { Acknowledgement, Venue2SetupRequest, WalletRequest, WalletTestResult } from "./VenueAccount.js"

// The feature's contract: its endpoints (below) and the schemas they use.
export * from "./VenueAccount.js"

/** Connecting accounts to the venues: `/api/venue1/...` and `/api/venue2/...`. */
export class VenueAccountsApi extends HttpApiGroup.make("venueAccounts")
  .add(
    HttpApiEndpoint.put("storeWallet", "/venue1/accounts/:account_id/wallet")
      .setPath(AccountPath)
      .setPayload(strictBody(WalletRequest))
      .addSuccess(Acknowledgement)
      .annotate(OpenApi.Summary, "Store the account's venue1 wallet (the private key sealed at rest)")
  )
  .add(
    HttpApiEndpoint.post("testWallet", "/venue1/accounts/:account_id/wallet/test")
      .setPath(AccountPath)
      .addSuccess(WalletTestResult)
      .annotate(OpenApi.Summary, "Ask venue1 about the stored wallet; success false when it refuses")
  )
  .add(
    HttpApiEndpoint.post("setupVenue2", "/venue2/accounts/:account_id/setup")
      .setPath(AccountPath)
      .setPayload(strictBody(Venue2SetupRequest))
      .addSuccess(Acknowledgement)
      .addError(ApiError.VenueRejected)
      .addError(ApiError.LeverageTooHigh)
      .annotate(OpenApi.Summary, "Check venue2 API keys against the venue, then store them sealed")
  )
  .addError(ApiError.Forbidden)
  .addError(ApiError.UpstreamError)
  .addError(ApiError.UpstreamTimeout)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Venue connections")
{}
