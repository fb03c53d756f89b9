import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { ApiError } from "../http/Errors.js"
import { Authentication } from "../users/Authentication.js"
import { MarketStreamParams } from "./StreamEvents.js"

export * from "./StreamEvents.js"

/** Live streams over HTTP. The WebSocket (`GET /api/ws`) is served beside the contract. */
export class StreamsApi extends HttpApiGroup.make("streams")
  .add(
    HttpApiEndpoint.get("marketIntelligence", "/market-intelligence/stream")
      .setUrlParams(MarketStreamParams)
      .addError(ApiError.SymbolNotListed)
      .setHeaders(Schema.Struct({ "last-event-id": Schema.optional(Schema.String) }))
      .addSuccess(HttpApiSchema.Text({ contentType: "text/event-stream" }))
      .annotate(
        OpenApi.Description,
        "Server-Sent Events: `snapshot` (prices, 24 h figures, the last hour's flow, your recent triggers), then `update` " +
          "(a moved price or one of your triggers), `news` (a new story about a symbol from a feed you enabled) and a " +
          "`heartbeat` every 15 s; each event has an `id`. Send the last one back as `Last-Event-ID` to resume without " +
          "losing triggers (news is not replayed). One stream per session token (429 otherwise)."
      )
      .annotate(OpenApi.Summary, "Live prices, flow and your signal triggers")
  )
  .addError(ApiError.UpstreamError)
  .addError(ApiError.UpstreamTimeout)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Streams")
{}
