import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { ApiError } from "../http/Errors.js"
import { strictBody } from "../http/StrictBody.js"
import { Authentication } from "../users/Authentication.js"
import {
  NewsList,
  NewsParams,
  NewsRefresh,
  NewsSource,
  NewsSourceCreate,
  NewsSourceList,
  NewsSourcePath,
  NewsSourceUpdate
} from "./NewsSource.js"

// The feature's contract: its endpoints (below) and the schemas they use.
export * from "./NewsSource.js"

/** News feeds of the caller and the stories read from them: `/api/news/...`. */
export class NewsApi extends HttpApiGroup.make("news")
  .add(
    HttpApiEndpoint.get("sources", "/news/sources")
      .addSuccess(NewsSourceList)
      .annotate(OpenApi.Summary, "The caller's news sources; a few public crypto feeds to start with, disabled")
  )
  .add(
    HttpApiEndpoint.post("create", "/news/sources")
      .setPayload(strictBody(NewsSourceCreate))
      .addSuccess(NewsSource, { status: 201 })
      .annotate(OpenApi.Summary, "Add a feed (RSS, Atom, RDF or JSON Feed)")
  )
  .add(
    HttpApiEndpoint.put("update", "/news/sources/:source_id")
      .setPath(NewsSourcePath)
      .setPayload(strictBody(NewsSourceUpdate))
      .addSuccess(NewsSource)
      .annotate(OpenApi.Summary, "Rename, move or enable/disable a source; absent fields are kept")
  )
  .add(
    HttpApiEndpoint.del("remove", "/news/sources/:source_id")
      .setPath(NewsSourcePath)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Summary, "Delete a source")
  )
  .add(
    HttpApiEndpoint.post("refresh", "/news/refresh")
      .addSuccess(NewsRefresh)
      .annotate(
        OpenApi.Summary,
        "Fetch the caller's enabled sources now; each answers its new stories or why it failed"
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/news")
      .setUrlParams(NewsParams)
      .addSuccess(NewsList)
      .annotate(OpenApi.Summary, "Stories of the caller's enabled sources, newest first, optionally about one symbol")
  )
  // Another user's source; an unknown id answers the API-wide 404.
  .addError(ApiError.Forbidden)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "News")
{}
