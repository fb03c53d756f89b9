import { HttpApiBuilder, type HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { PlatformConfig, PlatformLive } from "@trading-platform/core"
import { testOptions } from "@trading-platform/core/testing"
import { ApiLive, makeWebHandler, requestContext, ServerLive } from "@trading-platform/server"
import { Effect, Layer, Option, Tracer } from "effect"
import { createServer } from "node:http"
import { baseUrl, uniqueUser } from "../support/TestServer.js"

/** A tracer that records the names of the spans it is asked to start. */
const recordingTracer = () => {
  const names: Array<string> = []
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      names.push(name)
      const span: Tracer.Span = {
        _tag: "Span",
        name,
        spanId: String(names.length),
        traceId: "trace",
        parent,
        context,
        links: [...links],
        kind,
        status: { _tag: "Started", startTime },
        attributes: new Map(),
        sampled: true,
        end: () => {},
        attribute: () => {},
        event: () => {},
        addLinks: () => {}
      }
      return span
    },
    context: (f) => f()
  })
  return { names, tracer }
}

const register = (handler: (request: Request) => Promise<Response>, user = uniqueUser("trace")) =>
  handler(
    new Request("http://host/api/users/register", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(user)
    })
  )

const config = testOptions({ kind: "pglite", dataDir: "memory://" }, { redisUrl: Option.none() })

/** Serves `server` under the recording tracer, registers one user, answers the span names seen. */
const spansOf = (server: Layer.Layer<HttpServer.HttpServer, unknown>) => {
  const recorder = recordingTracer()
  return Effect.gen(function*() {
    const base = yield* baseUrl
    yield* Effect.promise(() => register((request) => fetch(base + new URL(request.url).pathname, request)))
    return recorder.names
  }).pipe(
    Effect.provide(server.pipe(Layer.provide(Layer.setTracer(recorder.tracer)))),
    Effect.scoped,
    Effect.runPromise
  )
}

describe("tracing", () => {
  it("the reference server records no spans, even under a host's tracer", { timeout: 60_000 }, async () => {
    const withoutSwitch = HttpApiBuilder.serve(requestContext).pipe(
      Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
      Layer.provide(ApiLive),
      Layer.provide(PlatformLive),
      Layer.provide(PlatformConfig.layer(config))
    )
    expect(await spansOf(withoutSwitch)).toContain("Users.register") // the control: the tracer does see spans
    const server = ServerLive({ port: 0, host: "127.0.0.1" }).pipe(Layer.provide(PlatformConfig.layer(config)))
    expect(await spansOf(server)).toEqual([])
  })

  it("an embedding host that passes a tracer gets a span per service call", { timeout: 60_000 }, async () => {
    const recorder = recordingTracer()
    const traced = makeWebHandler({ config, tracer: recorder.tracer })
    const user = uniqueUser("trace")
    expect((await register(traced.handler, user)).status).toBe(201)
    const login = await traced.handler(
      new Request("http://host/api/users/login", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: user.email, password: user.password })
      })
    )
    const { session_token } = await login.json() as { session_token: string }
    const me = await traced.handler(
      new Request("http://host/api/users/me", { headers: { authorization: `Bearer ${session_token}` } })
    )
    expect(me.status).toBe(200)
    await traced.dispose()
    // The spans of every request's own work too, which are made only while a tracer is on.
    expect(recorder.names).toEqual(
      expect.arrayContaining(["Users.register", "Users.login", "RateLimits.count", "Users.authenticate"])
    )
  })
})
