/**
 * The interactive API reference, in its own entry point (`@trading-platform/server/docs`) because
 * the page inlines Scalar's ~3 MB script, which hosts that embed the API should not load.
 */
import { HttpApiBuilder, HttpLayerRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { DocumentedApi } from "./OpenApiDocument.js"

/**
 * Only the page's own inline scripts (by their hashes) run; it loads nothing from elsewhere, calls
 * only this origin (Scalar's "try it"), and may not be framed. Scalar sets styles from its script,
 * hence inline styles.
 */
const contentSecurityPolicy = (html: string) => {
  const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((match) =>
    `'sha256-${createHash("sha256").update(match[1]!, "utf8").digest("base64")}'`
  )
  return [
    "default-src 'none'",
    // Scalar compiles WebAssembly; that allows it, and still no eval of JavaScript.
    `script-src ${scripts.join(" ")} 'wasm-unsafe-eval'`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'"
  ].join("; ")
}

/** The page with its policy, and no guessing of its type. */
const withHeaders = (page: HttpServerResponse.HttpServerResponse) => {
  const html = page.body._tag === "Uint8Array" ? new TextDecoder().decode(page.body.body) : ""
  return HttpServerResponse.setHeaders(page, {
    "content-security-policy": contentSecurityPolicy(html),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer"
  })
}

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
  Effect.map(withHeaders),
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
