import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { version } from "../Version.js"

/** What `GET /api/` says: where the reference, the document and the first steps are. */
export const apiIndex = {
  name: "Trading Platform API",
  version,
  docs: "/docs",
  openapi: "/openapi.json",
  health: "/api/health",
  start_here:
    "POST /api/users/register, then POST /api/users/login; send its session_token as 'Authorization: Bearer <token>'"
}

/** `GET /` goes to the reference page; `GET /api/` says what the API is, instead of answering 404. */
export const LandingLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    yield* router.get("/", HttpServerResponse.redirect("/docs", { status: 302 }))
    // The router answers `/api/` with the `/api` route too.
    yield* router.get("/api", Effect.succeed(HttpServerResponse.unsafeJson(apiIndex)))
  })
)
