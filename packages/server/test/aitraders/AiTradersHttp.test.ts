import { describe, expect, layer } from "@effect/vitest"
import { SignalEngine } from "@trading-platform/core"
import { testStorages } from "@trading-platform/core/testing"
import { Effect, TestClock } from "effect"
import { createAccount } from "../support/Accounts.js"
import { waitForRounds } from "../support/AiTraders.js"
import { AutomationServer } from "../support/Automation.js"
import { openSse, openWs } from "../support/StreamClients.js"
import { call, expectError, signUp } from "../support/TestServer.js"

// The scheduler polls every second of the test clock; a second at a time lets it see the clock's moves.
const tick = TestClock.adjust("1 second")
/** A second session of the user's, for a second stream (one stream per token). */
const secondToken = (user: { readonly email: string; readonly password: string }) =>
  Effect.map(
    call("POST", "/api/users/login", { body: { email: user.email, password: user.password } }),
    (reply) => reply.body.session_token as string
  )

const finished = (n: number) => (rounds: ReadonlyArray<any>) =>
  rounds.length >= n && rounds.every((r) => r.status === "completed" || r.status === "failed")

/** Queues a round by hand and answers the log once it has `n` finished rounds, newest first. */
const decide = (token: string, accountId: number, n = 1) =>
  Effect.gen(function*() {
    const queued = yield* call("POST", `/api/account/${accountId}/ai-trader/decide`, { token })
    expect(queued.status).toBe(202)
    expect(queued.body).toMatchObject({ account_id: accountId, trigger: "manual", status: "queued" })
    return yield* waitForRounds(token, accountId, finished(n))
  })

for (const storage of testStorages) {
  describe.skipIf(!storage.available)(`AI traders over ${storage.name}`, () => {
    layer(AutomationServer(storage), { timeout: "120 seconds" })((it) => {
      it.effect("GET and PUT /api/account/:id/ai-trader: defaults, then the settings set; bad input 400, unlisted symbol 422", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const account = yield* createAccount(token)
          const url = `/api/account/${account.id}/ai-trader`
          expect((yield* call("GET", url, { token })).body).toEqual({
            account_id: account.id,
            enabled: false,
            symbols: ["BTC"],
            timeframe: "1h",
            interval_minutes: 60,
            signal_pool_ids: [],
            system_prompt: null,
            user_template: null,
            max_rounds_per_hour: null,
            max_tokens_per_day: null,
            model: "builtin",
            next_run_at: null,
            created_at: null,
            updated_at: null
          })
          const set = yield* call("PUT", url, {
            token,
            body: { enabled: true, symbols: ["btc", "ETH"], interval_minutes: 15, max_rounds_per_hour: 4 }
          })
          expect(set.status).toBe(200)
          expect(set.body).toMatchObject({
            enabled: true,
            symbols: ["BTC", "ETH"],
            interval_minutes: 15,
            max_rounds_per_hour: 4,
            max_tokens_per_day: null
          })
          const now = yield* TestClock.currentTimeMillis
          expect(Date.parse(set.body.next_run_at)).toBe(Math.floor(now / 900_000) * 900_000 + 900_000)
          expect((yield* call("GET", url, { token })).body).toEqual(set.body)
          const off = yield* call("PUT", url, { token, body: { enabled: false } })
          expect(off.body).toMatchObject({ enabled: false, next_run_at: null, symbols: ["BTC", "ETH"] })

          for (
            const body of [
              { symbols: [] },
              { interval_minutes: 0 },
              { timeframe: "2h" },
              { max_rounds_per_hour: -1 },
              { enabled: "yes" },
              { unknown_field: 1 }
            ]
          ) {
            expectError(yield* call("PUT", url, { token, body }), 400, "invalid_input")
          }
          expectError(yield* call("PUT", url, { token, body: { symbols: ["NOPE"] } }), 422, "symbol_not_listed")
        }))

      it.effect("the AI trader's endpoints: no token 401, another user's account 403, unknown id 404, a MANUAL account 409, bad page 400", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const other = yield* signUp()
          const account = yield* createAccount(token)
          const manual = yield* createAccount(token, { account_type: "MANUAL" })
          for (
            const [method, suffix] of [["GET", "ai-trader"], ["PUT", "ai-trader"], ["POST", "ai-trader/decide"], [
              "GET",
              "decisions"
            ]] as const
          ) {
            const body = method === "PUT" ? { body: { enabled: false } } : {}
            const url = `/api/account/${account.id}/${suffix}`
            expectError(yield* call(method, url, body), 401, "unauthorized")
            expectError(yield* call(method, url, { ...body, token: other.token }), 403, "forbidden")
            expectError(yield* call(method, `/api/account/987654/${suffix}`, { ...body, token }), 404, "not_found")
            if (suffix !== "decisions") {
              expectError(
                yield* call(method, `/api/account/${manual.id}/${suffix}`, { ...body, token }),
                409,
                "conflict"
              )
            }
          }
          const url = `/api/account/${account.id}/decisions`
          for (const query of ["limit=0", "limit=501", "offset=-1", "limit=x"]) {
            expectError(yield* call("GET", `${url}?${query}`, { token }), 400, "invalid_input")
          }
          expect((yield* call("GET", url, { token })).body).toEqual({ decisions: [] })
        }))

      it.effect("a round of the built-in model reads the market, decides, and its orders go through the order path; the round is logged", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const account = yield* createAccount(token, { api_key: "sk-never-in-a-prompt-0123456789" })
          yield* call("PUT", `/api/account/${account.id}/ai-trader`, { token, body: { symbols: ["BTC", "ETH"] } })
          const [round] = yield* decide(token, account.id)
          expect(round).toMatchObject({
            account_id: account.id,
            trigger: "manual",
            status: "completed",
            outcome: "traded",
            model: "builtin",
            error: null,
            cost: 0
          })
          expect(round.prompt).toContain("[system]")
          expect(round.prompt).toContain("\"symbols\":[{\"symbol\":\"BTC\"")
          expect(round.prompt).not.toContain("sk-never-in-a-prompt")
          // No news source of the user's has stories about its symbols yet.
          expect(round.prompt).toContain(`"news":[]`)
          expect(round.prompt_tokens).toBeGreaterThan(0)
          expect(round.completion_tokens).toBeGreaterThan(0)
          expect(round.latency_ms).toBeGreaterThanOrEqual(0)
          expect(JSON.parse(round.raw_answer)).toEqual({ decisions: round.decisions })
          expect(round.decisions.map((d: any) => d.symbol)).toEqual(["BTC", "ETH"])
          for (const d of round.decisions) {
            expect(["buy", "sell", "hold"]).toContain(d.operation)
            expect(d.reason).toMatch(/SMA\(20\)/)
          }
          // Every decision that ordered left an order in the account's orders, the same ones.
          const listed = (yield* call("GET", `/api/account/${account.id}/orders`, { token })).body.orders
          const placed = round.orders.filter((o: any) => o.order_id !== null)
          // On the simulated market at this time both symbols trend up: the built-in model buys both.
          expect(placed.map((o: any) => o.symbol)).toEqual(["BTC", "ETH"])
          expect(placed.length).toBe(round.decisions.filter((d: any) => d.operation !== "hold").length)
          for (const o of placed) {
            const order = listed.find((l: any) => l.id === o.order_id)
            expect(order).toMatchObject({ symbol: o.symbol, status: o.status, run_id: null, route: "paper" })
            expect(order.status).toBe("filled")
          }
          // The decisions are in the account's decision log, as a program's are, and the fills in its trades.
          const exported = (yield* call("GET", `/api/trader/${account.id}/export`, { token })).body
          expect(exported.decision_logs.map((d: any) => [d.symbol, d.operation, d.reason])).toEqual(
            expect.arrayContaining(round.decisions.map((d: any) => [d.symbol, d.operation, d.reason]))
          )
          expect(exported.trades.map((t: any) => t.symbol).sort()).toEqual(["BTC", "ETH"])
          // The next round is shown the positions the first one opened, and keeps them (the trend is the same).
          const again = yield* decide(token, account.id, 2)
          if (placed.length > 0) {
            expect(again[0].prompt).toContain(`"positions":[{"symbol":"${placed[0].symbol}"`)
            const next = again[0].decisions.find((d: any) => d.symbol === placed[0].symbol)
            expect(next.operation).toBe("hold")
            expect(next.reason).toMatch(/keeping the (long|short) position/)
          }
          const page = (yield* call("GET", `/api/account/${account.id}/decisions?limit=1&offset=1`, { token })).body
          expect(page.decisions.map((r: any) => r.id)).toEqual([round.id])
        }))

      it.effect("rounds over the account's limits are logged as skipped with the reason, and ask no model", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const account = yield* createAccount(token)
          yield* call("PUT", `/api/account/${account.id}/ai-trader`, { token, body: { max_rounds_per_hour: 1 } })
          yield* decide(token, account.id)
          const [skipped] = yield* decide(token, account.id, 2)
          expect(skipped).toMatchObject({
            status: "completed",
            outcome: "skipped",
            prompt: null,
            prompt_tokens: 0,
            orders: [],
            error: expect.stringMatching(/^rounds_per_hour: 1 rounds in the last hour, the limit is 1/)
          })
          // A token budget of 1 lets one round ask its model, and stops the next.
          const thrifty = yield* createAccount(token)
          yield* call("PUT", `/api/account/${thrifty.id}/ai-trader`, { token, body: { max_tokens_per_day: 1 } })
          const [ran] = yield* decide(token, thrifty.id)
          expect(ran.outcome).toBe("traded")
          const [over] = yield* decide(token, thrifty.id, 2)
          expect(over).toMatchObject({
            outcome: "skipped",
            error: expect.stringMatching(/^tokens_per_day: \d+ tokens used today/)
          })
        }))

      it.effect("each finished round is streamed to its owner: the WebSocket's decisions channel and the SSE update kind decision", () =>
        Effect.gen(function*() {
          const user = yield* signUp()
          const { token } = user
          const account = yield* createAccount(token)
          const ws = yield* openWs(`?session_token=${token}`)
          ws.send({ type: "subscribe", channel: "decisions" })
          expect(yield* Effect.promise(() => ws.next())).toEqual({ type: "subscribed", channel: "decisions" })
          // A second socket follows this one account only.
          // (one stream per token: a session of its own)
          const one = yield* openWs(`?session_token=${yield* secondToken(user)}`)
          one.send({ type: "subscribe", channel: `decisions:${account.id}` })
          expect(yield* Effect.promise(() => one.next())).toEqual({
            type: "subscribed",
            channel: `decisions:${account.id}`
          })
          const sse = yield* openSse("?symbols=BTC", { token: yield* secondToken(user) })
          yield* Effect.promise(() => sse.next("snapshot"))
          // Another user's round is not theirs to hear.
          const other = yield* signUp()
          const elsewhere = yield* createAccount(other.token)
          for (
            const [channel, code] of [[`decisions:${elsewhere.id}`, "forbidden"], ["decisions:987654", "not_found"]]
          ) {
            one.send({ type: "subscribe", channel })
            expect(yield* Effect.promise(() => one.next((m) => m.type === "error"))).toMatchObject({ channel, code })
          }
          const mine = yield* createAccount(token)
          yield* decide(token, mine.id)
          yield* decide(other.token, elsewhere.id)
          const [round] = yield* decide(token, account.id)
          const streamed = yield* Effect.promise(() =>
            ws.next((m) => m.type === "event" && m.data.account_id === account.id)
          )
          expect(streamed).toMatchObject({
            type: "event",
            channel: "decisions",
            data: { id: round.id, account_id: account.id, status: "completed", outcome: "traded" }
          })
          // The account's own channel has this account's round only (not the other account's of the user).
          expect(yield* Effect.promise(() => one.next((m) => m.type === "event"))).toMatchObject({
            channel: `decisions:${account.id}`,
            data: { id: round.id, account_id: account.id }
          })
          one.socket.close()
          const update = yield* Effect.promise(async () => {
            for (;;) {
              const next = await sse.next("update")
              if (next.data.kind === "decision" && next.data.round.account_id === account.id) return next
            }
          })
          expect(update.data).toMatchObject({ kind: "decision", round: { id: round.id, account_id: account.id } })
          expect(update.data.round).toEqual(round)
          ws.socket.close()
          sse.close()
        }))

      it.effect("an enabled AI trader listening to a signal pool decides when the pool fires for one of its symbols; pools must be the owner's", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const account = yield* createAccount(token)
          const signal = yield* call("POST", "/api/signals", {
            token,
            body: {
              signal_name: "any volume",
              trigger_condition: { metric: "volume", operator: "gt", threshold: 0, time_window: "1m" }
            }
          })
          const pool = yield* call("POST", "/api/signals/pools", {
            token,
            body: { pool_name: "majors", symbols: ["BTC", "SOL"], logic: "OR", signal_ids: [signal.body.id] }
          })
          expect(pool.status).toBe(201)
          const url = `/api/account/${account.id}/ai-trader`
          const set = yield* call("PUT", url, {
            token,
            body: { enabled: true, symbols: ["BTC", "ETH"], interval_minutes: 1440, signal_pool_ids: [pool.body.id] }
          })
          expect(set.body.signal_pool_ids).toEqual([pool.body.id])
          const fired = yield* Effect.flatMap(SignalEngine, (engine) => engine.evaluateNow)
          expect(fired.filter((t) => t.pool_id === pool.body.id).map((t) => t.symbol).sort()).toEqual(["BTC", "SOL"])
          // BTC is the account's, SOL is not: one round.
          const rounds = yield* waitForRounds(token, account.id, finished(1))
          expect(rounds).toHaveLength(1)
          expect(rounds[0]).toMatchObject({ trigger: "signal", status: "completed", outcome: "traded" })
          // The round's context has the pool's trigger on BTC (not SOL's, not the account's symbol), and the ranking.
          const context = JSON.parse(rounds[0].prompt.split("Context: ")[1])
          expect(context.triggers.map((t: any) => [t.pool_name, t.symbol])).toEqual([["majors", "BTC"]])
          expect(context.triggers[0].values).toEqual([{ signal_name: "any volume", value: expect.any(Number) }])
          const ranked = context.ranking.map((r: any) => r.symbol)
          expect(ranked).toEqual(expect.arrayContaining(["BTC", "ETH"]))
          expect(context.ranking.filter((r: any) => r.rank <= 5)).toHaveLength(5)

          const other = yield* signUp()
          const theirs = yield* createAccount(other.token)
          // Another user's AI account on the same symbols never sees this user's triggers.
          const [theirRound] = yield* decide(other.token, theirs.id)
          expect(JSON.parse(theirRound.prompt.split("Context: ")[1]).triggers).toEqual([])
          expectError(
            yield* call("PUT", `/api/account/${theirs.id}/ai-trader`, {
              token: other.token,
              body: { signal_pool_ids: [pool.body.id] }
            }),
            403,
            "forbidden"
          )
          expectError(yield* call("PUT", url, { token, body: { signal_pool_ids: [999999] } }), 404, "not_found")
          yield* call("PUT", url, { token, body: { enabled: false } })
        }))

      it.effect("an account's own prompts: variables checked when saved (400, 422), filled in each round; GET /api/ai/prompt-variables lists them", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const listed = yield* call("GET", "/api/ai/prompt-variables", { token })
          expect(listed.status).toBe(200)
          expect(listed.body.variables.map((v: any) => v.name)).toEqual([
            "{context}",
            "{time}",
            "{symbols}",
            "{account}",
            "{positions}",
            "{orders}",
            "{market}",
            "{ranking}",
            "{triggers}",
            "{news}",
            "{candles:SYMBOL:TIMEFRAME:COUNT}"
          ])
          expect(listed.body.default_user_template).toBe("Context: {context}")
          expect(listed.body.default_system_prompt).toContain("{\"decisions\": [")
          expectError(yield* call("GET", "/api/ai/prompt-variables"), 401, "unauthorized")

          const account = yield* createAccount(token)
          const url = `/api/account/${account.id}/ai-trader`
          for (
            const [template, issue] of [
              ["Positions: {positons}", /\{positons\} is not a variable/],
              ["{candles:BTC:2h:10}", /timeframe must be one of/],
              ["{candles:BTC:1h:0}", /count must be a whole number from 1 to 200/],
              ["{candles:BTC}", /write \{candles:SYMBOL:TIMEFRAME:COUNT\}/]
            ] as const
          ) {
            const reply = yield* call("PUT", url, { token, body: { user_template: template } })
            expectError(reply, 400, "invalid_input")
            expect(reply.body.issues).toEqual([{ path: "user_template", message: expect.stringMatching(issue) }])
          }
          expectError(yield* call("PUT", url, { token, body: { system_prompt: "" } }), 400, "invalid_input")
          expectError(
            yield* call("PUT", url, { token, body: { user_template: "{candles:NOPE:1h:5}" } }),
            422,
            "symbol_not_listed"
          )
          const set = yield* call("PUT", url, {
            token,
            body: {
              system_prompt: "You trade {symbols} carefully. Answer {\"decisions\": []} JSON.",
              user_template: "At {time}: cash {account}; held {positions}; last ETH {candles:ETH:4h:3}"
            }
          })
          expect(set.status).toBe(200)
          expect(set.body.user_template).toBe(
            "At {time}: cash {account}; held {positions}; last ETH {candles:ETH:4h:3}"
          )
          const [round] = yield* decide(token, account.id)
          expect(round.outcome).toBe("traded")
          expect(round.prompt).toMatch(
            /^\[system\]\nYou trade BTC carefully\. Answer \{"decisions": \[\]\} JSON\.\n\n\[user\]\nAt 20/
          )
          expect(round.prompt).toContain(`cash {"id":${account.id},"name":"Momentum bot","cash":10000`)
          expect(round.prompt).toContain("held []")
          const eth = JSON.parse(round.prompt.split("last ETH ")[1])
          expect(eth).toHaveLength(3)
          expect(eth[2][0] - eth[1][0]).toBe(4 * 3_600_000)
          // Back to the defaults.
          const reset = yield* call("PUT", url, { token, body: { system_prompt: null, user_template: null } })
          expect(reset.body).toMatchObject({ system_prompt: null, user_template: null })
        }))

      it.effect("an enabled AI trader decides on its schedule: one round per interval of the test clock", () =>
        Effect.gen(function*() {
          const { token } = yield* signUp()
          const account = yield* createAccount(token)
          const set = yield* call("PUT", `/api/account/${account.id}/ai-trader`, {
            token,
            body: { enabled: true, interval_minutes: 1 }
          })
          expect(set.status).toBe(200)
          yield* TestClock.adjust("1 minute")
          const first = yield* waitForRounds(token, account.id, finished(1), tick)
          expect(first).toHaveLength(1)
          expect(first[0]).toMatchObject({ trigger: "schedule", status: "completed" })
          yield* TestClock.adjust("1 minute")
          const both = yield* waitForRounds(token, account.id, finished(2), tick)
          expect(both.map((r: any) => r.trigger)).toEqual(["schedule", "schedule"])
          yield* call("PUT", `/api/account/${account.id}/ai-trader`, { token, body: { enabled: false } })
        }))
    })
  })
}
