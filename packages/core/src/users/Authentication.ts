import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as OpenApi from "@effect/platform/OpenApi"
import { Context } from "effect"
import { ApiError } from "../http/Errors.js"
import type { SessionId, UserId } from "./User.js"

/** The authenticated caller, provided to every handler behind `Authentication`. */
export interface CurrentUserShape {
  readonly id: UserId
  readonly email: string
  readonly username: string
  /** When the user registered (ISO 8601), so `GET /api/users/me` answers without another query. */
  readonly created_at: string
  /** The session (token) this request presented; logout revokes it. */
  readonly sessionId: SessionId
}
export class CurrentUser extends Context.Tag("@trading-platform/core/CurrentUser")<CurrentUser, CurrentUserShape>() {}

/**
 * Session-token authentication: `Authorization: Bearer <token>` (preferred), or the legacy
 * `?session_token=<token>` query parameter.
 */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("@trading-platform/core/Authentication", {
  failure: ApiError.Unauthorized,
  provides: CurrentUser,
  security: {
    bearer: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(OpenApi.Description, "Session token from POST /api/users/login")
    ),
    sessionToken: HttpApiSecurity.apiKey({ in: "query", key: "session_token" }).pipe(
      HttpApiSecurity.annotate(OpenApi.Description, "Legacy: the session token as a query parameter (may be logged)")
    )
  }
}) {}
