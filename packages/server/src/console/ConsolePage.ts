import { HttpApiBuilder, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { readFile } from "node:fs/promises"
import { pathToFileURL } from "node:url"
import type { ConsoleAssets } from "./ConsoleBuild.js"

// Resolved on first use: the CommonJS build has no import.meta, and the ESM one no __filename.
const here = () => (typeof __filename === "string" ? pathToFileURL(__filename) : new URL(import.meta.url))

/**
 * The page's files. The package build has them in `dist/console/` (this module is bundled at the
 * root of `dist/`), listed by its `manifest.json`; from the sources (`.ts`) they are built now, with esbuild.
 */
const loadAssets = Effect.tryPromise(async (): Promise<ConsoleAssets> => {
  const base = here()
  if (base.pathname.endsWith(".ts")) {
    // A computed specifier, so the package's bundler leaves the builder and esbuild (a devDependency) out.
    const builder: typeof import("./ConsoleBuild.js") = await import(new URL("ConsoleBuild.ts", base).href)
    return builder.buildConsole()
  }
  const read = (name: string) => readFile(new URL(`console/${name}`, base), "utf8")
  const manifest: Omit<ConsoleAssets, "files"> & { readonly files: ReadonlyArray<string> } = JSON.parse(
    await read("manifest.json")
  )
  const files = Object.fromEntries(await Promise.all(manifest.files.map(async (name) => [name, await read(name)])))
  return { ...manifest, files }
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

const nosniff = { "x-content-type-options": "nosniff" }
// A file's name changes with its content, so a browser may keep it for good; the page is asked again each time.
const immutable = { ...nosniff, "cache-control": "public, max-age=31536000, immutable" }
const revalidated = { ...nosniff, "cache-control": "no-cache" }

/** Relative links, so a host that mounts the console under a prefix (`/trading/console`) serves it too. */
const page = (prefix: string, assets: ConsoleAssets) =>
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Trading Platform console</title>
<link rel="stylesheet" href="${prefix}${assets.style}">
<script type="module" src="${prefix}${assets.script}"></script>
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
    yield* router.get(
      "/console",
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        // The router answers `/console/` too, where the files are relative to the page itself.
        const prefix = request.url.split("?")[0]!.endsWith("/") ? "" : "console/"
        return HttpServerResponse.html(page(prefix, yield* assets)).pipe(
          HttpServerResponse.setHeaders({
            ...revalidated,
            "content-security-policy": contentSecurityPolicy,
            "referrer-policy": "no-referrer"
          })
        )
      })
    )
    // The files by their content-hashed names; `app.js` and `app.css` redirect to the current
    // ones, for links that cannot know the hash.
    yield* router.get(
      "/console/:file",
      Effect.gen(function*() {
        const { file = "" } = yield* HttpRouter.params
        const files = yield* assets
        const stable = { "app.js": files.script, "app.css": files.style }[file]
        if (stable !== undefined) {
          return HttpServerResponse.empty({ status: 302, headers: { ...revalidated, location: stable } })
        }
        const text = Object.hasOwn(files.files, file) ? files.files[file] : undefined
        if (text === undefined) return HttpServerResponse.empty({ status: 404 })
        const contentType = file.endsWith(".css") ? "text/css; charset=utf-8" : "text/javascript; charset=utf-8"
        return HttpServerResponse.text(text, { contentType, headers: immutable })
      })
    )
  })
)
