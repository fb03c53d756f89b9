import { HttpServer } from "@effect/platform"
import { expect } from "@effect/vitest"
import type { PlatformOptions } from "@trading-platform/core"
import { TestConfig, type TestStorage, testStorages } from "@trading-platform/core/testing"
import { ServerLive } from "@trading-platform/server"
import { Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"

/** The real server on a random port, over the given storage (in-memory PGlite by default). */
export const TestServer = (options: { storage?: TestStorage; config?: Partial<PlatformOptions> } = {}) =>
  ServerLive({ port: 0, host: "127.0.0.1" }).pipe(
    Layer.provideMerge(TestConfig(options.storage ?? testStorages[0]!, options.config))
  )

export const baseUrl = Effect.map(HttpServer.HttpServer, (server) => {
  const address = server.address
  if (address._tag !== "TcpAddress") throw new Error("expected a TCP server")
  return `http://127.0.0.1:${address.port}`
})

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly body: any
  readonly text: string
}

export interface CallOptions {
  readonly body?: unknown
  /** A raw body, sent as it is (a string, bytes, or form data with files). */
  readonly raw?: string | Uint8Array | FormData
  readonly token?: string
  readonly headers?: Record<string, string>
}

/** One HTTP request to the test server, answered with status, headers and the parsed JSON body. */
export const call = (method: string, path: string, options: CallOptions = {}) =>
  Effect.gen(function*() {
    const base = yield* baseUrl
    const headers: Record<string, string> = { ...options.headers }
    if (options.token !== undefined) headers["authorization"] = `Bearer ${options.token}`
    let body: string | Uint8Array | FormData | undefined = options.raw
    if (options.body !== undefined) {
      headers["content-type"] ??= "application/json"
      body = JSON.stringify(options.body)
    }
    return yield* Effect.promise(async (): Promise<Reply> => {
      const response = await fetch(base + path, {
        method,
        headers,
        ...(body !== undefined ? { body: body as NonNullable<RequestInit["body"]> } : {})
      })
      const text = await response.text()
      let parsed: unknown = undefined
      try {
        parsed = text === "" ? undefined : JSON.parse(text)
      } catch {
        parsed = undefined
      }
      return { status: response.status, headers: response.headers, body: parsed, text }
    })
  })

/** Asserts the error envelope: status, stable code, a message, and the request id in body and header. */
export const expectError = (reply: Reply, status: number, code: string) => {
  expect({ status: reply.status, code: reply.body?.code }).toEqual({ status, code })
  expect(typeof reply.body.error).toBe("string")
  expect(reply.body.error.length).toBeGreaterThan(0)
  expect(reply.body.request_id).toBe(reply.headers.get("x-request-id"))
  expect(reply.headers.get("content-type")).toContain("application/json")
  expect(reply.headers.get("x-ratelimit-limit")).toMatch(/^\d+$/)
  expect(reply.text).not.toMatch(/<html|\bat .*\(.*:\d+:\d+\)/i)
}

let counter = 0
/** A unique username and email for one test user. */
export const uniqueUser = (label = "user") => {
  const name = `${label}_${process.pid}_${++counter}_${randomBytes(3).toString("hex")}`.slice(0, 32)
  return { email: `${name}@example.com`, username: name, password: "correct horse battery" }
}

/** Registers a new user and logs in; answers the user and a session token. */
export const signUp = (label?: string) =>
  Effect.gen(function*() {
    const user = uniqueUser(label)
    const registered = yield* call("POST", "/api/users/register", { body: user })
    expect(registered.status).toBe(201)
    const login = yield* call("POST", "/api/users/login", { body: { email: user.email, password: user.password } })
    expect(login.status).toBe(200)
    return { ...user, id: registered.body.id as number, token: login.body.session_token as string }
  })
