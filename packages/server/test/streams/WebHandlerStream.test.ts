import { describe, expect, it } from "@effect/vitest"
import { testOptions } from "@trading-platform/core/testing"
import { makeWebHandler } from "@trading-platform/server"
import { Option } from "effect"
import { uniqueUser } from "../support/TestServer.js"

const config = testOptions({ kind: "pglite", dataDir: "memory://" }, { redisUrl: Option.none() })

describe("market-intelligence stream through makeWebHandler", () => {
  it(
    "a fetch-style host serves the SSE stream; cancelling it frees the token's stream",
    { timeout: 60_000 },
    async () => {
      const { dispose, handler } = makeWebHandler({ config })
      const post = (path: string, body: unknown) =>
        handler(
          new Request(`http://host${path}`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(body)
          })
        )
      const user = uniqueUser("web")
      expect((await post("/api/users/register", user)).status).toBe(201)
      const { session_token } = await (await post("/api/users/login", { email: user.email, password: user.password }))
        .json() as { session_token: string }
      const open = () =>
        handler(
          new Request("http://host/api/market-intelligence/stream?symbols=BTC", {
            headers: { authorization: `Bearer ${session_token}` }
          })
        )
      for (let round = 0; round < 2; round++) {
        const stream = await open()
        expect(stream.status, `round ${round}`).toBe(200)
        expect(stream.headers.get("content-type")).toContain("text/event-stream")
        const reader = stream.body!.getReader()
        let text = ""
        while (!text.includes("\n\n")) text += new TextDecoder().decode((await reader.read()).value)
        expect(text).toMatch(/^id: \d+-1\nevent: snapshot\ndata: \{/)
        await reader.cancel()
      }
      await dispose()
    }
  )
})
