import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { ApiError } from "../http/Errors.js"
import { Pagination } from "../http/Pagination.js"
import { strictBody } from "../http/StrictBody.js"
import { Authentication } from "../users/Authentication.js"
import { Account, AccountCreate, AccountPath, AccountUpdate } from "./Account.js"

// The feature's contract: its endpoints (below) and the schemas they use.
export * from "./Account.js"

/** Trading accounts of the caller: `/api/account/...`. */
export class AccountsApi extends HttpApiGroup.make("accounts")
  .add(
    HttpApiEndpoint.post("create", "/account")
      .setPayload(strictBody(AccountCreate))
      .addSuccess(Account, { status: 201 })
      .addError(ApiError.LeverageTooHigh)
      .annotate(OpenApi.Summary, "Create a trading account")
  )
  .add(
    HttpApiEndpoint.get("list", "/account/list")
      .setUrlParams(Pagination)
      .addSuccess(Schema.Array(Account))
      .annotate(OpenApi.Summary, "The caller's accounts, oldest first")
  )
  .add(
    HttpApiEndpoint.get("get", "/account/:account_id")
      .setPath(AccountPath)
      .addSuccess(Account)
      .annotate(OpenApi.Summary, "One account")
  )
  .add(
    HttpApiEndpoint.put("update", "/account/:account_id")
      .setPath(AccountPath)
      .setPayload(strictBody(AccountUpdate))
      .addSuccess(Account)
      .addError(ApiError.LeverageTooHigh)
      .addError(ApiError.Conflict)
      .annotate(OpenApi.Summary, "Change an account; absent fields are kept, null clears")
  )
  .add(
    HttpApiEndpoint.del("remove", "/account/:account_id")
      .setPath(AccountPath)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Summary, "Delete an account")
  )
  // Another user's account; an unknown id answers the API-wide 404.
  .addError(ApiError.Forbidden)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Accounts")
{}
