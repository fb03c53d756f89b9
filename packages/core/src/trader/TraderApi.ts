import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { AccountPath } from "../accounts/Account.js"
import { ApiError } from "../http/Errors.js"
import { strictBody } from "../http/StrictBody.js"
import { Authentication } from "../users/Authentication.js"
import { ImportPreview, ImportResult, TraderDocument, TraderExport } from "./TraderData.js"

// The feature's contract: its endpoints (below) and the schemas they use.
export * from "./TraderData.js"

/** An account's decision logs and trades, moved between accounts: `/api/trader/{id}/...`. */
export class TraderApi extends HttpApiGroup.make("trader")
  .add(
    HttpApiEndpoint.get("export", "/trader/:account_id/export")
      .setPath(AccountPath)
      .addSuccess(TraderExport)
      .annotate(OpenApi.Summary, "The account with its decision logs and trades, version 1.0")
  )
  .add(
    HttpApiEndpoint.post("preview", "/trader/:account_id/import/preview")
      .setPath(AccountPath)
      .setPayload(strictBody(TraderDocument))
      .addSuccess(ImportPreview)
      .annotate(OpenApi.Summary, "What an import would add and skip, without changing anything")
  )
  .add(
    HttpApiEndpoint.post("import", "/trader/:account_id/import")
      .setPath(AccountPath)
      .setPayload(strictBody(TraderDocument))
      .addSuccess(ImportResult)
      .annotate(OpenApi.Summary, "Import an exported document; duplicates are skipped")
  )
  .addError(ApiError.Forbidden)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Trader history")
{}
