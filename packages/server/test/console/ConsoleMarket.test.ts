import { afterAll, describe, expect, layer } from "@effect/vitest"
import { fakeQuietHours, startFakeVenue2, testOptions, testStorages } from "@trading-platform/core/testing"
import { ConsoleLive } from "@trading-platform/server"
import { Duration, Effect, Layer, TestClock } from "effect"
import type { Page } from "playwright-core"
import { createAccount } from "../support/Accounts.js"
import { BacktestServer } from "../support/Backtests.js"
import { browser, hasChromium } from "../support/Chromium.js"
import { baseUrl, call, signUp, TestServer } from "../support/TestServer.js"
import { cells, drawnChart, goTo, logIn, openPage, shoot } from "./ConsoleBrowser.js"

const withChromium = hasChromium("the console's market, dataset and session tests are")

const chart = ".chart[aria-label^='Candles of']"

/** What the market chart holds: its candles' count, and the open time (seconds) and close of its last. */
const lastCandle = (page: Page) =>
  page.$eval(chart, (element) => ({
    count: Number(element.getAttribute("data-candle-count")),
    time: Number(element.getAttribute("data-last-time")),
    close: Number(element.getAttribute("data-last-close"))
  }))

/**
 * Moves the server's clock a step at a time until the chart's last candle is at `time` (the price
 * reader reads once a second of that clock), and answers the candle.
 */
const untilCandleAt = (page: Page, time: number, step: "1 second" | "1 minute" = "1 second") =>
  Effect.gen(function*() {
    for (let tries = 0; tries < 30; tries++) {
      yield* TestClock.adjust(step)
      const seen = yield* Effect.promise(() =>
        page.waitForFunction(
          ([selector, at]) => document.querySelector(selector)?.getAttribute("data-last-time") === String(at),
          [chart, time] as const,
          { timeout: 2_000 }
        ).then(() => true, () => false)
      )
      if (seen) return yield* Effect.promise(() => lastCandle(page))
    }
    throw new Error(`the chart never had a candle at ${time}`)
  })

// Every WebSocket the page opens, so that the test can drop one as a network would.
const recordSockets = () => {
  const Native = WebSocket
  const sockets: Array<WebSocket> = []
  Object.assign(window, { sockets })
  window.WebSocket = class extends Native {
    constructor(url: string | URL, protocols?: string | Array<string>) {
      super(url, protocols)
      sockets.push(this)
    }
  }
}

describe("the web console: the live market, datasets, sessions, conversations and AI backtests", () => {
  // On a test clock at a time the simulated market has closed candles for, and prices that move with it.
  layer(BacktestServer(testStorages[0]!).pipe(Layer.provide(ConsoleLive)), { timeout: "180 seconds" })((it) => {
    it.effect.skipIf(!withChromium)(
      "in Chromium: the market chart takes each price from the WebSocket into its candles, and after the socket drops it says it is reconnecting, reconnects and subscribes again",
      () =>
        Effect.gen(function*() {
          const origin = yield* baseUrl
          const user = yield* signUp("market_live")
          const { failures, page } = yield* openPage(yield* browser, origin)
          yield* Effect.promise(() => page.addInitScript(recordSockets))
          yield* logIn(page, origin, user, "market")
          yield* Effect.promise(async () => {
            await page.selectOption("select[name=timeframe]", "1m")
            await page.waitForSelector(`.chart[aria-label='Candles of BTC on 1m'][data-series-count]`)
            await page.waitForSelector(".live-line [role=status]:text('Live: prices of BTC')")
          })
          const before = yield* Effect.promise(() => lastCandle(page))
          expect(before.count).toBe(300)
          // The clock stands at a minute's start: the first price opens the next candle.
          const opened = yield* untilCandleAt(page, before.time + 60)
          expect(opened.count).toBe(301)
          expect(yield* drawnChart(page, chart, 2, "#16a34a")).toBeGreaterThan(20)
          const text = yield* Effect.promise(() => page.textContent(".live-line"))
          expect(text).toContain("301 candles")

          const socketCount = () => Effect.promise(() => page.evaluate(() => (window as any).sockets.length as number))
          const opens = yield* socketCount()
          // The socket drops (as a network would, without the server closing it).
          yield* Effect.promise(() => page.evaluate(() => (window as any).sockets.at(-1).close(4000, "dropped")))
          yield* Effect.promise(() => page.waitForSelector(".live.reconnecting:text('Reconnecting')"))
          // The retry rule waits a second (and up to half a second more) before the next socket.
          yield* Effect.promise(() =>
            page.waitForSelector(".live-line [role=status]:text('Live: prices of BTC')", { timeout: 15_000 })
          )
          expect(yield* socketCount()).toBe(opens + 1)
          // Subscribed again: the next minute's price opens the next candle.
          const next = yield* untilCandleAt(page, opened.time + 60, "1 minute")
          expect(next.count).toBe(302)
          expect(next.close).not.toBe(opened.close)
          yield* shoot(page, "market-live")
          expect(failures).toEqual([])
        }).pipe(Effect.scoped),
      { timeout: 150_000 }
    )

    it.effect.skipIf(!withChromium)(
      "in Chromium: a CSV imported into a dataset reports its bad row by line, the dataset is listed and deleted; a sync the venue cannot do says why beside its button",
      () =>
        Effect.gen(function*() {
          const origin = yield* baseUrl
          const user = yield* signUp("datasets")
          const { failures, page } = yield* openPage(yield* browser, origin)
          yield* logIn(page, origin, user, "market")
          const start = Date.parse("2025-01-01T00:00:00Z")
          const rows = Array.from({ length: 5 }, (_, i) => `${start + i * 3_600_000},100,101,99,100.5,${i + 1}`)
          rows.splice(2, 0, "not a time,1,2,3,4,5")
          const csv = ["time,open,high,low,close,volume", ...rows].join("\n")
          // The same file sent to the API: the console must show the line it names.
          yield* Effect.promise(async () => {
            await page.click("button:text('Import candles')")
            await page.fill("form[aria-label='Import candles'] input[name=name]", "my-btc")
            await page.fill("form[aria-label='Import candles'] input[name=symbol]", "btc")
            await page.selectOption("form[aria-label='Import candles'] select[name=timeframe]", "1h")
            await page.setInputFiles("input[name=file]", {
              name: "btc.csv",
              mimeType: "text/csv",
              buffer: Buffer.from(csv)
            })
            await page.click("form[aria-label='Import candles'] button[type=submit]")
            await page.waitForSelector(".import-report")
          })
          expect(yield* Effect.promise(() => page.textContent(".import-report p"))).toContain(
            "5 rows imported into my-btc, 1 refused"
          )
          const problems = yield* cells(page, "table.problems tbody tr")
          expect(problems).toHaveLength(1)
          expect(problems[0]![0]).toBe("4")
          const api = (yield* call("GET", "/api/market/datasets", { token: user.token })).body.datasets
          expect(api).toMatchObject([{ name: "my-btc", symbol: "BTC", timeframe: "1h", bars: 5 }])
          yield* Effect.promise(() => page.waitForSelector("table.datasets tbody tr"))
          expect((yield* cells(page, "table.datasets tbody tr"))[0]!.slice(0, 5)).toEqual([
            "my-btc",
            "venue1",
            "BTC",
            "1h",
            "5"
          ])
          yield* Effect.promise(() => page.locator(".import-report").scrollIntoViewIfNeeded())
          yield* shoot(page, "market-datasets")

          // A file with no good row: the API's 400 beside the form's button.
          const bad = yield* call("POST", "/api/market/candles/import?name=my-btc&symbol=BTC&timeframe=1h", {
            token: user.token,
            raw: "nothing,here\n",
            headers: { "content-type": "text/csv" }
          })
          expect(bad.status).toBe(400)
          yield* Effect.promise(async () => {
            await page.setInputFiles("input[name=file]", {
              name: "bad.csv",
              mimeType: "text/csv",
              buffer: Buffer.from("nothing,here\n")
            })
            await page.click("form[aria-label='Import candles'] button[type=submit]")
            await page.waitForSelector("form[aria-label='Import candles'] > [role=alert]")
          })
          expect(yield* Effect.promise(() => page.textContent("form[aria-label='Import candles'] > [role=alert]")))
            .toContain(bad.body.error)

          // The simulated venue's candles are computed, so a sync of them is refused: its 400 beside the button.
          yield* Effect.promise(async () => {
            await page.click("button:text('Sync candles')")
            await page.click("form[aria-label='Sync candles'] button[type=submit]")
            await page.waitForSelector("form[aria-label='Sync candles'] > [role=alert]")
          })
          expect(yield* Effect.promise(() => page.textContent("form[aria-label='Sync candles'] > [role=alert]")))
            .toContain("(invalid_input)")

          yield* Effect.promise(async () => {
            await page.click("button:text('Delete dataset')")
            await page.click("button:text('Delete dataset my-btc for good')")
            await page.waitForSelector("p:text('No datasets yet.')")
          })
          expect((yield* call("GET", "/api/market/datasets", { token: user.token })).body.datasets).toEqual([])
          // The browser logs the refused requests itself (the import without a good row, the sync).
          expect(failures.filter((f) => !/status of 400/.test(f))).toEqual([])
        }).pipe(Effect.scoped),
      { timeout: 150_000 }
    )
    it.effect.skipIf(!withChromium)(
      "in Chromium: the user's sessions are listed from the header and another one revoked; a conversation with the assistant is opened again and deleted",
      () =>
        Effect.gen(function*() {
          const origin = yield* baseUrl
          const user = yield* signUp("sessions")
          // A second login: another device's session, to revoke from this one.
          const other = yield* call("POST", "/api/users/login", {
            body: { email: user.email, password: user.password }
          })
          const started = yield* call("POST", "/api/ai/conversations", {
            token: user.token,
            body: { message: "What moves BTC?", context: { symbol: "BTC", timeframe: "1h" } }
          })
          expect(started.status).toBe(201)
          const { failures, page } = yield* openPage(yield* browser, origin)
          yield* logIn(page, origin, user)
          yield* Effect.promise(async () => {
            await page.click("header a:text('Sessions')")
            await page.waitForSelector("table.sessions tbody tr")
          })
          const listed = (yield* call("GET", "/api/users/sessions", { token: user.token })).body.sessions
          // Signed up, logged in again, and this tab's login.
          expect(listed).toHaveLength(3)
          const rows = yield* cells(page, "table.sessions tbody tr")
          // The API marks the session of the token that asked (the test's); the page, its own: the newest.
          const tab = Math.max(...listed.map((s: any) => s.id))
          expect(rows.map((row) => row[0])).toEqual(
            listed.map((s: any) => s.id === tab ? `#${s.id} (this tab)` : `#${s.id}`)
          )
          expect(rows.filter((row) => row[0]!.includes("(this tab)"))).toHaveLength(1)
          yield* shoot(page, "sessions")
          // The second login's: neither this tab's nor the test's own.
          const target = listed.find((s: any) => s.id !== tab && !s.current)
          yield* Effect.promise(async () => {
            await page.click(`table.sessions tr:has(td:text-is('#${target.id}')) button:text('Delete session')`)
            await page.click(`button:text('Delete session #${target.id} for good')`)
            await page.waitForFunction(
              (id) =>
                ![...document.querySelectorAll("table.sessions td:first-child")].some((td) =>
                  td.textContent === `#${id}`
                ),
              target.id
            )
          })
          const left = (yield* call("GET", "/api/users/sessions", { token: user.token })).body.sessions
          expect(left.map((s: any) => s.id)).not.toContain(target.id)
          expect(left).toHaveLength(2)
          expect((yield* call("GET", "/api/users/me", { token: other.body.session_token })).status).toBe(401)
          expect((yield* call("GET", "/api/users/me", { token: user.token })).status).toBe(200)

          yield* goTo(page, "Assistant")
          yield* Effect.promise(async () => {
            await page.waitForSelector("table.conversations tbody tr")
            await page.click(`table.conversations button:text('${started.body.title}')`)
            await page.waitForSelector(".chat.question")
          })
          expect(yield* Effect.promise(() => page.textContent(".chat.question"))).toBe("What moves BTC?")
          expect(yield* Effect.promise(() => page.textContent(".chat.answer"))).not.toBe("")
          yield* shoot(page, "assistant-conversations")
          yield* Effect.promise(async () => {
            await page.click("button:text('Delete conversation')")
            await page.click(`button:text('Delete conversation ${started.body.title} for good')`)
            await page.waitForSelector("p:text('No conversations yet.')")
          })
          // The conversation shown was the one deleted: the chat starts afresh.
          expect(yield* Effect.promise(() => page.$$(".chat.question"))).toEqual([])
          expect((yield* call("GET", "/api/ai/conversations", { token: user.token })).body.conversations).toEqual([])
          expect(failures).toEqual([])
        }).pipe(Effect.scoped),
      { timeout: 120_000 }
    )

    it.effect.skipIf(!withChromium)(
      "in Chromium: an AI account's model key is cleared, and an AI backtest of it is started, followed to its result, and refused beside its form for a range without market data",
      () =>
        Effect.gen(function*() {
          const origin = yield* baseUrl
          const user = yield* signUp("ai_backtest")
          const account = yield* createAccount(user.token, { name: "Builtin bot", api_key: "sk-test-key" })
          expect(account.has_api_key).toBe(true)
          const { failures, page } = yield* openPage(yield* browser, origin)
          yield* logIn(page, origin, user, "accounts")
          yield* Effect.promise(async () => {
            await page.waitForSelector(".ai-trader :text('its API key stored')")
            await page.click("button:text('Delete model API key of')")
            await page.click("button:text('Delete model API key of Builtin bot for good')")
            await page.waitForSelector(".ai-trader :text('no API key')")
          })
          const accounts = (yield* call("GET", "/api/account/list", { token: user.token })).body
          expect(accounts[0]).toMatchObject({ id: account.id, has_api_key: false })

          // A range after the market's clock: the API's 422 beside the form, and its field.
          const form = "form[aria-label='New AI backtest']"
          const refused = yield* call("POST", `/api/account/${account.id}/backtest`, {
            token: user.token,
            body: { start: "2030-01-01T00:00:00.000Z", end: "2030-01-02T00:00:00.000Z" }
          })
          expect(refused.status).toBe(422)
          yield* Effect.promise(async () => {
            await page.fill(`${form} input[name=start]`, "2030-01-01")
            await page.fill(`${form} input[name=end]`, "2030-01-02")
            await page.click(`${form} button[type=submit]`)
            await page.waitForSelector(`${form} > [role=alert]`)
          })
          expect(yield* Effect.promise(() => page.textContent(`${form} > [role=alert]`))).toBe(
            `${refused.body.error} (${refused.body.code})`
          )
          expect(yield* Effect.promise(() => page.getAttribute(`${form} input[name=end]`, "aria-invalid"))).toBe("true")

          // A day of hourly bars, deciding every four hours: six slots, answered by the built-in model.
          yield* Effect.promise(async () => {
            await page.fill(`${form} input[name=start]`, "2025-05-01")
            await page.fill(`${form} input[name=end]`, "2025-05-02")
            await page.selectOption(`${form} select[name=timeframe]`, "1h")
            await page.fill(`${form} input[name=interval_minutes]`, "240")
            await page.click(`${form} button[type=submit]`)
            await page.waitForSelector(".ai-backtest[data-status=completed]", { timeout: 90_000 })
            await page.waitForSelector("table.ai-backtest-runs tbody tr")
          })
          const runs =
            (yield* call("GET", `/api/account/${account.id}/backtests`, { token: user.token })).body.backtests
          expect(runs).toHaveLength(1)
          const run =
            (yield* call("GET", `/api/account/${account.id}/backtests/${runs[0].id}`, { token: user.token })).body
          expect(run).toMatchObject({ status: "completed", timeframe: "1h", interval_minutes: 240, model: "builtin" })
          expect(run.slots).toHaveLength(6)
          const metrics = yield* cells(page, "table.ai-backtest-metrics tbody tr")
          expect(metrics[0]![3]).toBe(String(run.metrics.total_trades))
          expect(yield* cells(page, "table.ai-backtest-slots tbody tr")).toHaveLength(6)
          expect((yield* cells(page, "table.ai-backtest-runs tbody tr"))[0]![3]).toBe("completed")
          expect(yield* drawnChart(page, ".chart[aria-label^='Equity of AI backtest']", 1, "#2563eb")).toBeGreaterThan(
            10
          )
          yield* Effect.promise(() => page.locator(".ai-backtest").scrollIntoViewIfNeeded())
          yield* shoot(page, "accounts-ai-backtest")
          expect(failures.filter((f) => !/status of 422/.test(f))).toEqual([])
        }).pipe(Effect.scoped),
      { timeout: 150_000 }
    )
  })
})

// venue2 is a fake HTTP venue (venue1 stays simulated), with one candle sync worker.
const fakeVenue2 = await startFakeVenue2()
afterAll(() => fakeVenue2.close())
const syncDay = fakeQuietHours.from - 5 * 3_600_000

const SyncServer = TestServer({
  storage: testStorages[0]!,
  config: {
    venues: {
      ...testOptions({ kind: "pglite", dataDir: "memory://" }).venues,
      venue2: { mode: "http", baseUrl: fakeVenue2.url, timeout: Duration.seconds(5), retries: 0 },
      candleSyncs: { concurrency: 1, pollInterval: Duration.seconds(1), lease: Duration.seconds(30), maxAttempts: 3 }
    }
  }
}).pipe(Layer.provide(Layer.effectDiscard(TestClock.setTime(syncDay + 5 * 86_400_000))))

describe("the web console: candle syncs from an HTTP venue", () => {
  layer(SyncServer.pipe(Layer.provide(ConsoleLive)), { timeout: "120 seconds" })((it) => {
    it.effect.skipIf(!withChromium)(
      "in Chromium: a sync started from the market view is followed while it waits out the venue, and cancelled from its button",
      () =>
        Effect.gen(function*() {
          const origin = yield* baseUrl
          const user = yield* signUp("sync_cancel")
          // The venue asks to wait half a minute at each request for bars: the sync stays running.
          fakeVenue2.throttle = { times: 1_000, retryAfter: 30, path: "/fapi/v1/klines" }
          const { failures, page } = yield* openPage(yield* browser, origin)
          yield* logIn(page, origin, user, "market")
          const form = "form[aria-label='Sync candles']"
          yield* Effect.promise(async () => {
            await page.click("button:text('Sync candles')")
            await page.selectOption(`${form} select[name=exchange]`, "venue2")
            await page.fill(`${form} input[name=from]`, new Date(syncDay).toISOString().slice(0, 10))
            await page.fill(`${form} input[name=to]`, new Date(syncDay + 2 * 86_400_000).toISOString().slice(0, 10))
            await page.click(`${form} button[type=submit]`)
            await page.waitForSelector(".sync[role=status]:has-text('running')", { timeout: 30_000 })
          })
          const id = Number((yield* Effect.promise(() => page.textContent(".sync[role=status]")))!.match(/#(\d+)/)![1])
          expect((yield* call("GET", `/api/market/candles/sync/${id}`, { token: user.token })).body.status).toBe(
            "running"
          )
          yield* Effect.promise(async () => {
            await page.click("button:text('Cancel sync')")
            await page.waitForSelector(".sync[role=status]:has-text('cancelled')")
          })
          expect(yield* Effect.promise(() => page.$$("button:text('Cancel sync')"))).toEqual([])
          expect((yield* call("GET", `/api/market/candles/sync/${id}`, { token: user.token })).body.status).toBe(
            "cancelled"
          )
          fakeVenue2.throttle = { times: 0, retryAfter: 1 }
          yield* Effect.promise(() => page.locator(".sync").scrollIntoViewIfNeeded())
          yield* shoot(page, "market-sync")
          expect(failures).toEqual([])
        }).pipe(Effect.scoped),
      { timeout: 90_000 }
    )
  })
})
