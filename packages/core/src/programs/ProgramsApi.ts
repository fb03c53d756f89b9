import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { ApiError } from "../http/Errors.js"
import { idParam } from "../http/IdParam.js"
import { Pagination } from "../http/Pagination.js"
import { strictBody } from "../http/StrictBody.js"
import { Authentication } from "../users/Authentication.js"
import { Program, ProgramId, ProgramList, ProgramRequest, ProgramSummary, ProgramUpdate } from "./Program.js"

// The feature's contract: its endpoints (below) and the schemas they use.
export * from "./Program.js"

/** `/programs/:id` */
export const ProgramPath = Schema.Struct({ id: idParam(ProgramId) })

/** Trading programs of the caller: `/api/programs...`. */
export class ProgramsApi extends HttpApiGroup.make("programs")
  .add(
    HttpApiEndpoint.post("create", "/programs")
      .setPayload(strictBody(ProgramRequest))
      .addSuccess(Program, { status: 201 })
      .addError(ApiError.ProgramInvalid)
      .addError(ApiError.UnsupportedLanguage)
      .annotate(OpenApi.Summary, "Create a program; it must load in the sandbox and export decide(data)")
  )
  .add(
    HttpApiEndpoint.get("list", "/programs")
      .setUrlParams(Pagination)
      .addSuccess(ProgramList)
      .annotate(OpenApi.Summary, "The caller's programs without their code, newest first")
  )
  .add(
    HttpApiEndpoint.get("get", "/programs/:id")
      .setPath(ProgramPath)
      .addSuccess(Program)
      .addError(ApiError.Forbidden)
      .addError(ApiError.NotFound)
      .annotate(OpenApi.Summary, "One program with its code")
  )
  .add(
    HttpApiEndpoint.put("update", "/programs/:id")
      .setPath(ProgramPath)
      .setPayload(strictBody(ProgramUpdate))
      .addSuccess(ProgramSummary)
      .addError(ApiError.Forbidden)
      .addError(ApiError.NotFound)
      .addError(ApiError.ProgramInvalid)
      .addError(ApiError.UnsupportedLanguage)
      .annotate(
        OpenApi.Summary,
        "Change a program: the fields given replace theirs, absent ones are kept (as PUT /account/{id} does)"
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/programs/:id")
      .setPath(ProgramPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(ApiError.Forbidden)
      .addError(ApiError.NotFound)
      .annotate(OpenApi.Summary, "Delete a program")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Programs")
{}
