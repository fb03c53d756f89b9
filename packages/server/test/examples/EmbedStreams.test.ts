import { describe, expect, it } from "@effect/vitest"
import { testRedisUrl } from "@trading-platform/core/testing"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { openSseAt, openWsAt, until } from "../support/StreamClients.js"
import { uniqueUser } from "../support/TestServer.js"

const examplesDir = fileURLToPath(new URL("../../../../examples/", import.meta.url))

/** Where each embedding example serves the platform, read from the line it prints when it listens. */
const examples = {
  "embed-node-http": /Host on (http:\/\/[\d.:]+); the platform answers under \1\/api\//,
  "embed-express": /Express on (http:\/\/[\d.:]+); the platform answers under (\1\/trading)\/api\//
} as const

/**
 * The example as `npm start` runs it (without EXAMPLE_EXIT: it keeps serving), on a free port and
 * in-memory storage, with Redis when the tests have it; answers its platform's base URL.
 */
const serve = (example: keyof typeof examples) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child = spawn(
        process.execPath,
        ["--import", "tsx", "--conditions=@trading-platform/source", "src/main.ts"],
        {
          cwd: examplesDir + example,
          env: {
            PATH: process.env["PATH"] ?? "",
            PORT: "0",
            DATA_DIR: "memory://",
            ...(testRedisUrl ? { REDIS_URL: testRedisUrl } : {})
          },
          stdio: ["ignore", "pipe", "pipe"]
        }
      )
      let output = ""
      child.stdout!.on("data", (chunk) => (output += chunk))
      child.stderr!.on("data", (chunk) => (output += chunk))
      return { child, output: () => output }
    }),
    ({ child }) => Effect.sync(() => child.kill())
  ).pipe(
    Effect.flatMap(({ output }) =>
      Effect.promise(() =>
        until(`${example} to listen`, () => {
          const match = examples[example].exec(output())
          return match ? match[2] ?? match[1]! : undefined
        }, 120_000)
      )
    )
  )

const signUp = (base: string) =>
  Effect.promise(async () => {
    const user = uniqueUser("example")
    const post = (path: string, body: unknown) =>
      fetch(base + path, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body)
      })
    expect((await post("/api/users/register", user)).status).toBe(201)
    return (await (await post("/api/users/login", { email: user.email, password: user.password })).json())
      .session_token as string
  })

const wait = <A>(promise: () => Promise<A>) => Effect.promise(promise)

describe("the embedding examples serve the live streams", () => {
  for (const example of Object.keys(examples) as Array<keyof typeof examples>) {
    it.live(
      `${example}: the SSE stream and the WebSocket, one stream per token, released when closed`,
      () =>
        Effect.gen(function*() {
          const base = yield* serve(example)
          const token = yield* signUp(base)

          const sse = yield* openSseAt(base, "?symbols=BTC", { token })
          expect(sse.status).toBe(200)
          expect((yield* wait(() => sse.next("snapshot"))).data.prices.BTC.price).toBeGreaterThan(0)
          // The stream holds the token's lease: the WebSocket is refused with the envelope.
          const refused = yield* openWsAt(base, `?session_token=${token}`)
          expect(yield* wait(() => refused.refusal)).toMatchObject({ status: 429, body: { code: "rate_limited" } })
          const bad = yield* openWsAt(base, "?session_token=nope")
          expect(yield* wait(() => bad.refusal)).toMatchObject({ status: 401, body: { code: "unauthorized" } })

          // Closed, its lease is free: the WebSocket opens at once, authenticated by its first message.
          sse.close()
          const ws = yield* openWsAt(base)
          expect(yield* wait(() => ws.refused)).toBeUndefined()
          ws.send({ type: "auth", token })
          ws.send({ type: "subscribe", channel: "prices:BTC" })
          expect(yield* wait(() => ws.next())).toEqual({ type: "subscribed", channel: "prices:BTC" })
          ws.send({ type: "subscribe", channel: "prices:NOPE" })
          expect(yield* wait(() => ws.next())).toMatchObject({ type: "error", code: "symbol_not_listed" })
          // And the other way round: the SSE stream opens as soon as the socket is closed.
          ws.socket.close(1000)
          const again = yield* openSseAt(base, "?symbols=ETH", { token })
          expect(again.status).toBe(200)
          yield* wait(() => again.next("snapshot"))
          again.close()

          // A socket that never authenticates is closed by the platform's own rules.
          const silent = yield* openWsAt(base)
          expect(yield* wait(() => silent.next(undefined, 10_000))).toMatchObject({
            type: "error",
            code: "unauthorized"
          })
          expect(yield* wait(() => silent.closed)).toEqual({ code: 1008, reason: "Authentication timeout" })
        }).pipe(Effect.scoped),
      180_000
    )
  }
})
