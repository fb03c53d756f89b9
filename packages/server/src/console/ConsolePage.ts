import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { readFile } from "node:fs/promises"
import { pathToFileURL } from "node:url"
import type { ConsoleAssets } from "./ConsoleBuild.js"

// Resolved on first use: the CommonJS build has no import.meta, and the ESM one no __filename.
const here = () => (typeof __filename === "string" ? pathToFileURL(__filename) : new URL(import.meta.url))

/**
 * The page's script and style. The package build has them in `dist/console/` (this module is
 * bundled at the root of `dist/`); from the sources (`.ts`) they are built now, with esbuild.
 */
const loadAssets = Effect.tryPromise(async (): Promise<ConsoleAssets> => {
  const base = here()
  if (base.pathname.endsWith(".ts")) {
    // A computed specifier, so the package's bundler leaves the builder and esbuild (a devDependency) out.
    const builder: typeof import("./ConsoleBuild.js") = await import(new URL("ConsoleBuild.ts", base).href)
    return builder.buildConsole()
  }
  const read = (name: string) => readFile(new URL(`console/${name}`, base), "utf8")
  return { "app.js": await read("app.js"), "app.css": await read("app.css") }
})

/**
 * Only this origin's script, style and API; no inline code, no frames, no forms posted elsewhere.
 * The token lives in the page's session storage and goes in headers, never in a URL.
 */
const contentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join("; ")

const common = { "x-content-type-options": "nosniff", "cache-control": "no-cache" }

/** Relative links, so a host that mounts the console under a prefix (`/trading/console`) serves it too. */
const page = (assets: string) =>
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Trading Platform console</title>
<link rel="stylesheet" href="${assets}app.css">
<script type="module" src="${assets}app.js"></script>
</head>
<body><main id="app"></main></body>
</html>
`

/**
 * `GET /console`: the web console, a page that talks to the API through the Promise client
 * (`docs/console.md`). Its files are read (or built) once, on the first request.
 */
export const ConsoleLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const assets = yield* Effect.cached(loadAssets)
    const file = (name: keyof ConsoleAssets, contentType: string) =>
      Effect.map(assets, (files) => HttpServerResponse.text(files[name], { contentType, headers: common }))
    yield* router.get(
      "/console",
      Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
        // The router answers `/console/` too, where the files are relative to the page itself.
        HttpServerResponse.html(page(request.url.split("?")[0]!.endsWith("/") ? "" : "console/")).pipe(
          HttpServerResponse.setHeaders({
            ...common,
            "content-security-policy": contentSecurityPolicy,
            "referrer-policy": "no-referrer"
          })
        ))
    )
    yield* router.get("/console/app.js", file("app.js", "text/javascript; charset=utf-8"))
    yield* router.get("/console/app.css", file("app.css", "text/css; charset=utf-8"))
  })
)
