import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { ApiError } from "../http/Errors.js"
import { idParam } from "../http/IdParam.js"
import { Pagination } from "../http/Pagination.js"
import { strictBody } from "../http/StrictBody.js"
import { ProgramId } from "../programs/Program.js"
import { ProgramPath } from "../programs/ProgramsApi.js"
import { Authentication } from "../users/Authentication.js"
import {
  BiasCheck,
  BiasCheckId,
  BiasCheckList,
  BiasCheckRequest,
  maxBiasCheckBars,
  minBiasCheckBars
} from "./BiasCheck.js"

// The feature's contract: its endpoints (below) and the schemas they use.
export * from "./BiasCheck.js"

const BiasCheckPath = Schema.Struct({ id: idParam(ProgramId), check_id: idParam(BiasCheckId) })

/** Lookahead and warm-up checks of the caller's programs: `/api/programs/{id}/checks...`. */
export class BiasChecksApi extends HttpApiGroup.make("biasChecks")
  .add(
    HttpApiEndpoint.post("submit", "/programs/:id/checks")
      .setPath(ProgramPath)
      .setPayload(strictBody(BiasCheckRequest))
      .addSuccess(BiasCheck, { status: 202 })
      .addError(ApiError.Forbidden)
      .addError(ApiError.NotFound)
      .addError(ApiError.LeverageTooHigh)
      .addError(ApiError.NoMarketData)
      .addError(ApiError.SymbolNotListed)
      .addError(ApiError.ProgramInvalid)
      .addError(ApiError.UnsupportedLanguage)
      .addError(ApiError.UpstreamError)
      .addError(ApiError.UpstreamTimeout)
      .annotate(
        OpenApi.Description,
        `Queues five backtests of the program's current code: the full range and three runs cut at a quarter, half ` +
          `and three quarters of it (with the whole window of history before \`start\`), and the full range with ` +
          `\`warmup_bars\` of history. \`end\` is after \`start\`, ${minBiasCheckBars} to ${maxBiasCheckBars} bars ` +
          "of the timeframe (400 naming `end`). The five count against MAX_QUEUED_JOBS_PER_USER together (429 " +
          "unless all fit). Poll GET /programs/{id}/checks/{check_id} for the verdict."
      )
      .annotate(OpenApi.Summary, "Check a program for lookahead and warm-up bias")
  )
  .add(
    HttpApiEndpoint.get("list", "/programs/:id/checks")
      .setPath(ProgramPath)
      .setUrlParams(Pagination)
      .addSuccess(BiasCheckList)
      .addError(ApiError.Forbidden)
      .addError(ApiError.NotFound)
      .annotate(OpenApi.Summary, "The program's bias checks, newest first, with their verdicts")
  )
  .add(
    HttpApiEndpoint.get("get", "/programs/:id/checks/:check_id")
      .setPath(BiasCheckPath)
      .addSuccess(BiasCheck)
      .addError(ApiError.Forbidden)
      .addError(ApiError.NotFound)
      .annotate(OpenApi.Summary, "One bias check: where its runs are and, once they have ended, its verdict")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Bias checks")
{}
