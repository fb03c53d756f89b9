import { describe, expect, it, layer } from "@effect/vitest"
import { openApiDocument } from "@trading-platform/server"
import { DocsPageLive } from "@trading-platform/server/docs"
import { Effect, Layer, Schedule } from "effect"
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { createServer } from "node:net"
import { fileURLToPath } from "node:url"
import { chromium } from "playwright-core"
import { baseUrl, call, TestServer } from "../support/TestServer.js"

const chromiumPath = "/usr/bin/chromium"
const hasChromium = existsSync(chromiumPath)
if (!hasChromium) {
  console.warn(`${chromiumPath} is missing (apt-get install -y chromium): the /docs browser test is SKIPPED`)
}

const summaries = Object.values<any>(openApiDocument().paths)
  .flatMap((item) => Object.values<any>(item))
  .map((op) => op.summary as string)

const browser = Effect.acquireRelease(
  Effect.promise(() =>
    chromium.launch({
      executablePath: chromiumPath,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync"
      ]
    })
  ),
  (b) => Effect.promise(() => b.close())
)

describe("the reference server's documentation routes", () => {
  layer(TestServer().pipe(Layer.provide(DocsPageLive)), { timeout: "120 seconds" })((it) => {
    it.effect("GET /openapi.json answers the generated document", () =>
      Effect.gen(function*() {
        const reply = yield* call("GET", "/openapi.json")
        expect(reply.status).toBe(200)
        expect(reply.headers.get("content-type")).toContain("application/json")
        expect(reply.body).toEqual(JSON.parse(JSON.stringify(openApiDocument())))
      }))

    it.effect("GET /docs answers a self-contained HTML page", () =>
      Effect.gen(function*() {
        const reply = yield* call("GET", "/docs")
        expect(reply.status).toBe(200)
        expect(reply.headers.get("content-type")).toContain("text/html")
        expect(reply.text).toContain("<title>Trading Platform API</title>")
        expect(reply.text).not.toMatch(/<script[^>]+src="https?:/)
      }))

    it.effect.skipIf(!hasChromium)(
      "/docs in headless Chromium lists every endpoint, loading nothing from elsewhere",
      () =>
        Effect.gen(function*() {
          const origin = yield* baseUrl
          const page = yield* Effect.flatMap(browser, (b) => Effect.promise(() => b.newPage()))
          const elsewhere: Array<string> = []
          page.on("request", (request) => {
            const target = request.url()
            if (!target.startsWith(`${origin}/`) && !target.startsWith("data:")) elsewhere.push(target)
          })
          yield* Effect.promise(() => page.goto(`${origin}/docs`))
          for (const summary of summaries) {
            const entry = page.getByText(summary, { exact: true }).first()
            yield* Effect.promise(() => entry.waitFor({ state: "attached", timeout: 20_000 }))
          }
          expect(elsewhere).toEqual([])
        }).pipe(Effect.scoped),
      { timeout: 90_000 }
    )
  })
})

/** A port nobody listens on right now (the CLI refuses port 0). */
const freePort = Effect.async<number>((resume) => {
  const probe = createServer().listen(0, "127.0.0.1", () => {
    const { port } = probe.address() as { port: number }
    probe.close(() => resume(Effect.succeed(port)))
  })
})

/** The CLI as `npm start` runs it, on in-memory storage; stopped with the scope. */
const referenceServer = (port: number) =>
  Effect.acquireRelease(
    Effect.sync(() =>
      spawn(process.execPath, [
        "--conditions=@trading-platform/source",
        "--import",
        "tsx",
        "src/main.ts",
        "--port",
        String(port),
        "--data-dir",
        "memory://"
      ], { cwd: fileURLToPath(new URL("../..", import.meta.url)), stdio: "ignore" })
    ),
    (child) => Effect.sync(() => child.kill())
  )

describe("npm start", () => {
  it.live("mounts the docs page next to the API and /openapi.json", () =>
    Effect.gen(function*() {
      const port = yield* freePort
      yield* referenceServer(port)
      const base = `http://127.0.0.1:${port}`
      // Poll until the process listens, for at most 60 s.
      const docs = yield* Effect.tryPromise(() => fetch(`${base}/docs`)).pipe(
        Effect.retry(Schedule.spaced("200 millis").pipe(Schedule.upTo("60 seconds")))
      )
      expect(docs.status).toBe(200)
      expect(yield* Effect.promise(() => docs.text())).toContain("<title>Trading Platform API</title>")
      const openapi = yield* Effect.promise(() => fetch(`${base}/openapi.json`))
      expect(openapi.status).toBe(200)
      expect(yield* Effect.promise(() => openapi.json())).toEqual(JSON.parse(JSON.stringify(openApiDocument())))
    }).pipe(Effect.scoped), 90_000)
})
