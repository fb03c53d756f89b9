import { describe, expect, it, layer } from "@effect/vitest"
import { openApiDocument } from "@trading-platform/server"
import { DocsPageLive } from "@trading-platform/server/docs"
import { Effect, Layer, Schedule, TestServices } from "effect"
import { browser, hasChromium } from "../support/Chromium.js"
import { referenceServer } from "../support/ServerProcess.js"
import { baseUrl, call, TestServer } from "../support/TestServer.js"

const withChromium = hasChromium("the /docs browser test is")

const summaries = Object.values<any>(openApiDocument().paths)
  .flatMap((item) => Object.values<any>(item))
  .map((op) => op.summary as string)

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

    it.effect.skipIf(!withChromium)(
      "/docs in headless Chromium lists every endpoint, loading nothing from elsewhere, within its Content-Security-Policy",
      () =>
        Effect.gen(function*() {
          const origin = yield* baseUrl
          const page = yield* Effect.flatMap(browser, (b) => Effect.promise(() => b.newPage()))
          const elsewhere: Array<string> = []
          page.on("request", (request) => {
            const target = request.url()
            if (!target.startsWith(`${origin}/`) && !target.startsWith("data:")) elsewhere.push(target)
          })
          const refused: Array<string> = []
          page.on("console", (message) => {
            if (/content security policy/i.test(message.text())) refused.push(message.text())
          })
          yield* Effect.promise(() => page.goto(`${origin}/docs`))
          // Scalar renders the operations progressively, slower on a busy machine: one deadline (real
          // time) for the whole list, not one per entry, and the failure names what never appeared.
          const unrendered = Effect.promise(() =>
            page.evaluate((all) => {
              const text = (document.body.textContent ?? "").replace(/\s+/g, " ")
              return all.filter((summary) => !text.includes(summary))
            }, summaries)
          )
          const missing = yield* unrendered.pipe(
            Effect.filterOrFail((left) => left.length === 0),
            Effect.retry(Schedule.spaced("250 millis")),
            Effect.timeout("75 seconds"),
            Effect.orElse(() => unrendered),
            TestServices.provideLive
          )
          expect(missing).toEqual([])
          expect(elsewhere).toEqual([])
          expect(refused).toEqual([])
        }).pipe(Effect.scoped),
      { timeout: 90_000 }
    )
  })
})

describe("npm start", () => {
  it.live("mounts the docs page next to the API and /openapi.json", () =>
    Effect.gen(function*() {
      const base = yield* referenceServer()
      const docs = yield* Effect.promise(() => fetch(`${base}/docs`))
      expect(docs.status).toBe(200)
      expect(yield* Effect.promise(() => docs.text())).toContain("<title>Trading Platform API</title>")
      const openapi = yield* Effect.promise(() => fetch(`${base}/openapi.json`))
      expect(openapi.status).toBe(200)
      expect(yield* Effect.promise(() => openapi.json())).toEqual(JSON.parse(JSON.stringify(openApiDocument())))
    }).pipe(Effect.scoped), 150_000)
})
