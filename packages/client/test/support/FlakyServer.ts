import { Effect } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

export interface Answer {
  readonly status: number
  readonly headers?: Record<string, string>
  readonly body?: unknown
}

/** The error envelope the platform answers, for a flaky server to imitate. */
export const envelope = (status: number, code: string, extra: Record<string, unknown> = {}): Answer => ({
  status,
  headers: { "x-request-id": `req-${status}` },
  body: { error: `failed with ${status}`, code, request_id: `req-${status}`, ...extra }
})

export const healthy: Answer = { status: 200, body: { status: "ok", version: "0.0.0", storage: "pglite" } }

/**
 * A local HTTP server that gives the scripted answers in turn (the last one forever), closed with
 * the scope; `requests()` counts what it received.
 */
export const flakyServer = (answers: ReadonlyArray<Answer>) =>
  Effect.acquireRelease(
    Effect.async<{ baseUrl: string; requests: () => number; server: ReturnType<typeof createServer> }>((resume) => {
      let received = 0
      const server = createServer((_request, response) => {
        const answer = answers[Math.min(++received, answers.length) - 1]!
        response.writeHead(answer.status, { "content-type": "application/json", ...answer.headers })
        response.end(answer.body === undefined ? "" : JSON.stringify(answer.body))
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({
          baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          requests: () => received,
          server
        })))
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
      })
  )

/** Retry settings that keep a test against a real server fast: the rule as is, in milliseconds. */
export const fastRetry = { base: "1 millis", maxJitter: "1 millis" } as const
