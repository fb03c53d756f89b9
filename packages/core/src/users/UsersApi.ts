import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { ApiError } from "../http/Errors.js"
import { idParam } from "../http/IdParam.js"
import { Pagination } from "../http/Pagination.js"
import { strictBody } from "../http/StrictBody.js"
import { Authentication } from "./Authentication.js"
import {
  LoginRequest,
  LoginResponse,
  PasswordChangeRequest,
  RegisterRequest,
  SessionId,
  SessionList,
  User,
  UserDeleteRequest
} from "./User.js"

// The feature's contract: its endpoints (below) and the schemas they use.
export * from "./User.js"

/** Users and session tokens: `/api/users/...`. Register and login need no token. */
export class UsersApi extends HttpApiGroup.make("users")
  .add(
    HttpApiEndpoint.post("logout", "/users/logout")
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Summary, "Revoke the presented token")
  )
  .add(
    HttpApiEndpoint.post("changePassword", "/users/password")
      .setPayload(strictBody(PasswordChangeRequest))
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Summary, "Change the password; revokes every token of the user")
  )
  .add(HttpApiEndpoint.get("me", "/users/me").addSuccess(User).annotate(OpenApi.Summary, "The caller"))
  .add(
    HttpApiEndpoint.del("deleteMe", "/users/me")
      .setPayload(strictBody(UserDeleteRequest))
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(
        OpenApi.Summary,
        "Delete the caller and everything they own (accounts, programs, backtests, signals, ...); needs the password"
      )
  )
  .add(
    HttpApiEndpoint.get("sessions", "/users/sessions")
      .setUrlParams(Pagination)
      .addSuccess(SessionList)
      .annotate(OpenApi.Summary, "Active tokens of the caller, newest first")
  )
  .add(
    HttpApiEndpoint.del("revokeSession", "/users/sessions/:id")
      .setPath(Schema.Struct({ id: idParam(SessionId) }))
      .addSuccess(HttpApiSchema.NoContent)
      .addError(ApiError.Forbidden)
      .addError(ApiError.NotFound)
      .annotate(OpenApi.Summary, "Revoke one of the caller's tokens")
  )
  .middlewareEndpoints(Authentication)
  .add(
    HttpApiEndpoint.post("register", "/users/register")
      .setPayload(strictBody(RegisterRequest))
      .addSuccess(User, { status: 201 })
      .addError(ApiError.Conflict)
      .annotate(OpenApi.Summary, "Create a user")
  )
  .add(
    HttpApiEndpoint.post("login", "/users/login")
      .setPayload(strictBody(LoginRequest))
      .addSuccess(LoginResponse)
      .addError(ApiError.Unauthorized)
      .annotate(OpenApi.Summary, "Exchange email and password for a session token")
  )
  .annotate(OpenApi.Title, "Users and sessions")
{}
