/**
 * The interactive API reference, in its own entry point (`@trading-platform/server/docs`) because
 * the page inlines Scalar's ~3 MB script, which hosts that embed the API should not load.
 */
import { HttpApiScalar } from "@effect/platform"
import { Layer } from "effect"
import { Documented } from "./OpenApiDocument.js"

/**
 * `GET /docs`: the contract rendered by Scalar with every group open. It loads nothing from other
 * hosts (no CDN, no web fonts), so it works offline and tells no third party who reads it.
 */
export const DocsPageLive = HttpApiScalar.layer({
  path: "/docs",
  scalar: { defaultOpenAllTags: true, withDefaultFonts: false }
}).pipe(Layer.provide(Documented))
