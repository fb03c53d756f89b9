import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { referenceServer } from "../support/ServerProcess.js"

/** A JSON request to the server under test; its status and body. */
const send = (base: string, method: string, path: string, body?: unknown, token?: string) =>
  Effect.promise(async () => {
    const reply = await fetch(`${base}/api${path}`, {
      method,
      headers: {
        "content-type": "application/json",
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    return { status: reply.status, body: await reply.json() as any }
  })

// What only the bundle can break (a lazy import of a CommonJS package worked from the sources and
// failed in the bundle): a TypeScript program, and a portfolio backtest in the bundle's own thread.
describe("npm start's bundle", () => {
  it.live(
    "compiles a TypeScript program and backtests it over two symbols and a longer timeframe",
    () =>
      Effect.gen(function*() {
        const base = yield* referenceServer([], "bundle")
        const user = { email: "bundle@example.com", username: "bundle", password: "correct horse battery" }
        expect((yield* send(base, "POST", "/users/register", user)).status).toBe(201)
        const token = (yield* send(base, "POST", "/users/login", { email: user.email, password: user.password })).body
          .session_token as string
        const program = yield* send(base, "POST", "/programs", {
          name: "typed",
          language: "typescript",
          code: `export function decide(data: { symbols: Record<string, { position: unknown }> }): object {
  return Object.keys(data.symbols).map((symbol: string) => ({ symbol, operation: data.symbols[symbol]!.position ? "close" : "buy", target_portion_of_balance: 0.4 }))
}`
        }, token)
        expect(program.status).toBe(201)
        let backtest = (yield* send(base, "POST", `/programs/${program.body.id}/backtest`, {
          symbols: ["BTC", "ETH"],
          timeframes: ["4h"],
          timeframe: "1h",
          start: "2025-01-01T00:00:00Z",
          end: "2025-01-03T00:00:00Z"
        }, token)).body
        for (
          let deadline = Date.now() + 90_000;
          ["queued", "running"].includes(backtest.status) && Date.now() < deadline;
        ) {
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 200)))
          backtest = (yield* send(base, "GET", `/programs/backtest/${backtest.id}`, undefined, token)).body
        }
        expect([backtest.status, backtest.error]).toEqual(["completed", null])
        expect(backtest.per_symbol.map((m: any) => [m.symbol, m.total_trades > 0])).toEqual([["BTC", true], [
          "ETH",
          true
        ]])
      }).pipe(Effect.scoped),
    180_000
  )
})
