import { Effect } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

/** How the fake model answers one request. */
export type Script = (req: IncomingMessage, res: ServerResponse) => void

/**
 * A local OpenAI-compatible server (`/v1`, e.g. `POST /v1/chat/completions`): each request is
 * answered by the next script (500 when none is left), and recorded with its authorization header.
 */
export const fake = {
  scripts: [] as Array<Script>,
  requests: [] as Array<{ authorization: string | undefined; body: any }>,
  url: ""
}

/** Starts the fake on a random loopback port for the scope; its base URL is then `fake.url`. */
export const FakeProvider = Effect.acquireRelease(
  Effect.async<ReturnType<typeof createServer>>((resume) => {
    const server = createServer((req, res) => {
      let raw = ""
      req.on("data", (piece) => (raw += piece))
      req.on("end", () => {
        fake.requests.push({ authorization: req.headers.authorization, body: raw === "" ? null : JSON.parse(raw) })
        const script = fake.scripts.shift()
        if (script) script(req, res)
        else res.writeHead(500).end("no script")
      })
    })
    server.listen(0, "127.0.0.1", () => {
      fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
      resume(Effect.succeed(server))
    })
  }),
  (server) =>
    Effect.sync(() => {
      server.closeAllConnections()
      server.close()
    })
)

/** Answers with an error status (and headers, e.g. `Retry-After`). */
export const status = (code: number, headers: Record<string, string> = {}): Script => (_, res) => {
  res.writeHead(code, { "content-type": "application/json", ...headers }).end(
    JSON.stringify({ error: { message: "nope" } })
  )
}

/** A non-streamed chat completion whose message is `content`, with the usage reported. */
export const completion =
  (content: string, usage = { prompt_tokens: 42, completion_tokens: 7 }): Script => (_, res) => {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1,
      model: "test-model",
      choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens }
    }))
  }

/** Never answers (until the server closes): for timeouts. */
export const silent: Script = () => {}

/** Sets the scripts of the next requests and forgets the recorded ones. */
export const reset = (...scripts: Array<Script>) =>
  Effect.sync(() => {
    fake.scripts = scripts
    fake.requests = []
  })
