/**
 * The interactive API reference, in its own entry point (`@trading-platform/server/docs`) because
 * the page inlines Scalar's ~3 MB script, which hosts that embed the API should not load.
 */
import { HttpApiBuilder, HttpLayerRouter, HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import { DocumentedApi } from "./OpenApiDocument.js"

/**
 * Scalar's page (`HttpApiScalar`) for the documented contract. Its layer builds the page, the
 * whole OpenAPI document and the script, when the layer is built; here it is built when first
 * asked for, by serving one request through a router holding only that page, and then kept.
 */
const scalarPage = Effect.promise(() => import("@effect/platform/HttpApiScalar")).pipe(
  Effect.flatMap((HttpApiScalar) =>
    HttpLayerRouter.toHttpEffect(HttpApiScalar.layerHttpLayerRouter({
      api: DocumentedApi,
      path: "/docs",
      scalar: { defaultOpenAllTags: true, withDefaultFonts: false }
    }))
  ),
  Effect.flatMap((page) =>
    Effect.provideService(
      page,
      HttpServerRequest.HttpServerRequest,
      HttpServerRequest.fromWeb(new Request("http://docs/docs"))
    )
  ),
  Effect.scoped,
  Effect.orDie
)

/**
 * `GET /docs`: the contract rendered by Scalar with every group open. It loads nothing from other
 * hosts (no CDN, no web fonts), so it works offline and tells no third party who reads it. The
 * page is built on the first request: start-up need not wait for it.
 */
export const DocsPageLive = HttpApiBuilder.Router.use((router) =>
  Effect.flatMap(Effect.cached(scalarPage), (page) => router.get("/docs", page))
)
