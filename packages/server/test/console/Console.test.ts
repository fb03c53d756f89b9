import { describe, expect, it, layer } from "@effect/vitest"
import { testOptions, testStorages } from "@trading-platform/core/testing"
import { ConsoleLive, makeWebHandler } from "@trading-platform/server"
import { Duration, Effect, Layer, TestClock } from "effect"
import type { Browser, Page } from "playwright-core"
import { createAccount } from "../support/Accounts.js"
import { AutomationServer, waitForList } from "../support/Automation.js"
import { BacktestServer } from "../support/Backtests.js"
import { browser, hasChromium } from "../support/Chromium.js"
import { referenceServer } from "../support/ServerProcess.js"
import { baseUrl, call, signUp } from "../support/TestServer.js"

const withChromium = hasChromium("the console browser tests are")

const crossover = `export function decide(data) {
  const fast = ta.sma(data.candles, 10), slow = ta.sma(data.candles, 30)
  if (slow === null) return { operation: "hold" }
  if (fast > slow && data.position?.side !== "long") return { operation: "buy", target_portion_of_balance: 0.5 }
  if (fast < slow && data.position?.side !== "short") return { operation: "sell", target_portion_of_balance: 0.5 }
  return { operation: "hold" }
}`

/** Logs in through the page's form, as a user would. */
const logIn = (page: Page, origin: string, user: { email: string; password: string }) =>
  Effect.promise(async () => {
    await page.goto(`${origin}/console`)
    await page.fill("input[name=email]", user.email)
    await page.fill("input[name=password]", user.password)
    await page.click("button[type=submit]")
    await page.waitForSelector("header nav", { timeout: 30_000 })
  })

/** Pixels of a PNG (decoded by a blank page of the browser) close to the charts' line colour, #2563eb. */
const linePixels = (b: Browser, png: Buffer) =>
  Effect.promise(async () => {
    const blank = await b.newPage()
    const count = await blank.evaluate(async (source) => {
      const image = new Image()
      image.src = `data:image/png;base64,${source}`
      await image.decode()
      const canvas = document.createElement("canvas")
      canvas.width = image.width
      canvas.height = image.height
      const context = canvas.getContext("2d")!
      context.drawImage(image, 0, 0)
      const { data } = context.getImageData(0, 0, image.width, image.height)
      let blue = 0
      for (let i = 0; i < data.length; i += 4) {
        if (Math.abs(data[i]! - 37) < 40 && Math.abs(data[i + 1]! - 99) < 40 && data[i + 2]! > 180) blue++
      }
      return blue
    }, png.toString("base64"))
    await blank.close()
    return count
  })

describe("the web console", () => {
  // With backtest workers, on a test clock at a time the simulated market has closed candles for.
  layer(BacktestServer(testStorages[0]!).pipe(Layer.provide(ConsoleLive)), { timeout: "180 seconds" })((it) => {
    it.effect("GET /console answers the page with a strict Content-Security-Policy, and its script and style", () =>
      Effect.gen(function*() {
        const page = yield* call("GET", "/console")
        expect(page.status).toBe(200)
        expect(page.headers.get("content-type")).toContain("text/html")
        const csp = page.headers.get("content-security-policy")!
        expect(csp).toContain("default-src 'none'")
        expect(csp).toContain("script-src 'self'")
        expect(csp).toContain("connect-src 'self'")
        expect(csp).not.toContain("unsafe")
        expect(page.headers.get("x-content-type-options")).toBe("nosniff")
        expect(page.text).toContain(`<script type="module" src="console/app.js">`)
        // No inline script: the CSP would refuse it.
        expect(page.text).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/)
        // At /console/ the files are relative to the page itself.
        expect((yield* call("GET", "/console/")).text).toContain(`src="app.js"`)
        const script = yield* call("GET", "/console/app.js")
        expect(script.status).toBe(200)
        expect(script.headers.get("content-type")).toContain("text/javascript")
        // The Promise client is bundled in: the page calls the API through it.
        expect(script.text).toContain("TradingApiError")
        const style = yield* call("GET", "/console/app.css")
        expect(style.headers.get("content-type")).toContain("text/css")
        expect((yield* call("GET", "/console/other.js")).status).toBe(404)
      }))

    it.effect.skipIf(!withChromium)(
      "in Chromium: log in, run a backtest, see its equity curve and drawdown drawn, with its trades",
      () =>
        Effect.gen(function*() {
          const origin = yield* baseUrl
          const user = yield* signUp("console")
          const created = yield* call("POST", "/api/programs", {
            token: user.token,
            body: { name: "SMA crossover", code: crossover }
          })
          expect(created.status).toBe(201)
          const b = yield* browser
          const page = yield* Effect.promise(() => b.newPage({ viewport: { width: 1200, height: 1600 } }))
          const failures: Array<string> = []
          page.on("pageerror", (error) => failures.push(error.message))
          // The browser's own request for /favicon.ico is the one 404 allowed.
          page.on("console", (message) => {
            if (message.type() === "error" && !message.location().url.endsWith("/favicon.ico")) {
              failures.push(`${message.text()} ${message.location().url}`)
            }
          })
          const requested: Array<string> = []
          page.on("request", (request) => requested.push(request.url()))
          yield* logIn(page, origin, user)

          // Programs opens first, on the only program; its code is in the editor.
          yield* Effect.promise(() => page.waitForSelector("textarea[name=code]"))
          expect(yield* Effect.promise(() => page.inputValue("textarea[name=code]"))).toBe(crossover)
          yield* Effect.promise(async () => {
            await page.fill("input[name=from]", "2025-01-01")
            await page.fill("input[name=to]", "2025-01-15")
            await page.click("form.run button[type=submit]")
            await page.waitForSelector("section.backtest", { timeout: 90_000 })
          })
          expect(yield* Effect.promise(() => page.getAttribute("section.backtest", "data-status"))).toBe("completed")
          const history = yield* call("GET", `/api/programs/backtest/history?program_id=${created.body.id}`, {
            token: user.token
          })
          const backtest = yield* call("GET", `/api/programs/backtest/${history.body.backtests[0].id}`, {
            token: user.token
          })
          expect(backtest.body.status).toBe("completed")
          expect(backtest.body.trades.length).toBeGreaterThan(0)

          // One point per equity point, in both charts; one table row per trade.
          const drawn = yield* Effect.promise(() =>
            page.$$eval("section.backtest svg.chart polyline", (lines) =>
              lines.map((line) => line.getAttribute("points")!.trim().split(/\s+/).length))
          )
          expect(drawn).toEqual([backtest.body.equity_curve.length, backtest.body.equity_curve.length])
          const rows = yield* Effect.promise(() =>
            page.$$eval("section.backtest table", (t) =>
              (t.at(-1) as HTMLTableElement).rows.length)
          )
          expect(rows).toBe(backtest.body.trades.length + 1)

          // The chart is really painted: its screenshot shows the line's colour.
          const chart = yield* Effect.promise(() => page.locator("section.backtest svg.chart").first().screenshot())
          expect(yield* linePixels(b, chart)).toBeGreaterThan(300)

          expect(failures).toEqual([])
          // Nothing left this origin, and the token never went into a URL.
          expect(requested.filter((url) => !url.startsWith(`${origin}/`))).toEqual([])
          expect(requested.filter((url) => url.includes(user.token))).toEqual([])
        }).pipe(Effect.scoped),
      { timeout: 150_000 }
    )

    it.effect.skipIf(!withChromium)(
      "in Chromium: the ranking table sorts by the column clicked",
      () =>
        Effect.gen(function*() {
          const origin = yield* baseUrl
          const user = yield* signUp("ranking")
          const b = yield* browser
          const page = yield* Effect.promise(() => b.newPage())
          yield* logIn(page, origin, user)
          const column = (key: string) =>
            Effect.promise(async () => {
              const index = await page.$$eval(
                "table.ranking th",
                (ths, k) => ths.findIndex((th) => th.dataset.key === k),
                key
              )
              return page.$$eval(
                `table.ranking tbody tr td:nth-child(${index + 1})`,
                (cells) => cells.map((cell) => cell.textContent!)
              )
            })
          const click = (key: string) => Effect.promise(() => page.click(`table.ranking th[data-key="${key}"]`))
          const sort = (key: string) =>
            Effect.promise(() => page.getAttribute(`table.ranking th[data-key="${key}"]`, "aria-sort"))
          yield* Effect.promise(async () => {
            await page.click("nav button:text('Ranking')")
            await page.waitForSelector("table.ranking tbody tr", { timeout: 60_000 })
          })
          const symbols = yield* column("symbol")
          expect(symbols.length).toBeGreaterThan(2)
          const ranks = (yield* column("rank")).map(Number)
          expect(ranks).toEqual([...ranks].sort((x, y) => x - y))

          yield* click("symbol")
          expect(yield* sort("symbol")).toBe("ascending")
          expect(yield* column("symbol")).toEqual([...symbols].sort((x, y) => x.localeCompare(y)))
          yield* click("symbol")
          expect(yield* sort("symbol")).toBe("descending")
          expect(yield* column("symbol")).toEqual([...symbols].sort((x, y) => y.localeCompare(x)))
          yield* click("rank")
          expect((yield* column("rank")).map(Number)).toEqual(ranks)
        }).pipe(Effect.scoped),
      { timeout: 120_000 }
    )
    it.effect.skipIf(!withChromium)(
      "in Chromium: API text is shown as text, and the assistant's answer streams into the chat",
      () =>
        Effect.gen(function*() {
          const origin = yield* baseUrl
          const user = yield* signUp("chat")
          const name = "<img src=x onerror=\"window.pwned=1\">"
          yield* call("POST", "/api/programs", { token: user.token, body: { name, code: crossover } })
          const b = yield* browser
          const page = yield* Effect.promise(() => b.newPage())
          yield* logIn(page, origin, user)
          yield* Effect.promise(() => page.waitForSelector("ul.list button[data-id]"))
          expect(yield* Effect.promise(() => page.textContent("ul.list button[data-id]"))).toBe(name)
          expect(yield* Effect.promise(() => page.$$("ul.list img"))).toEqual([])
          expect(yield* Effect.promise(() => page.evaluate(() => (window as any).pwned))).toBeUndefined()

          yield* Effect.promise(async () => {
            await page.click("nav button:text('Assistant')")
            await page.fill("textarea[name=message]", "How is BTC doing?")
            await page.click("form button[type=submit]")
            await page.waitForFunction(() => document.querySelector(".chat.answer")?.textContent?.length, null, {
              timeout: 60_000
            })
          })
          expect(yield* Effect.promise(() => page.textContent(".chat.question"))).toBe("How is BTC doing?")
          expect(yield* Effect.promise(() => page.$$eval(".error", (errors) => errors.map((e) => e.textContent))))
            .toEqual([])
        }).pipe(Effect.scoped),
      { timeout: 120_000 }
    )
  })
})

describe("the web console's arena and AI accounts", () => {
  // With the PnL refresher, hourly on the test clock, so that an hour's move measures the dashboard once.
  const hourly = {
    pollInterval: Duration.hours(1),
    watchInterval: Duration.hours(1),
    pnlRefreshInterval: Duration.hours(1)
  }
  layer(AutomationServer(testStorages[0]!, hourly).pipe(Layer.provide(ConsoleLive)), { timeout: "180 seconds" })(
    (it) => {
      it.effect.skipIf(!withChromium)(
        "in Chromium: the leaderboard charts every dashboard account's return and ranks them in a table",
        () =>
          Effect.gen(function*() {
            const origin = yield* baseUrl
            const user = yield* signUp("arena")
            const rival = yield* signUp("rival")
            yield* createAccount(user.token, { name: "Mine" })
            yield* createAccount(rival.token, { name: "<b>Theirs</b>" })
            yield* TestClock.adjust("1 hour")
            yield* waitForList(user.token, "/api/arena/leaderboard", "entries", (entries) => entries.length === 2)
            const b = yield* browser
            const page = yield* Effect.promise(() => b.newPage())
            yield* logIn(page, origin, user)
            yield* Effect.promise(async () => {
              await page.click("nav button:text('Arena')")
              await page.waitForSelector("#view table tbody tr", { timeout: 60_000 })
            })
            const rows = yield* Effect.promise(() =>
              page.$$eval(
                "#view table tbody tr",
                (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent))
              )
            )
            expect(rows.map((row) => row.slice(0, 2))).toEqual([["1", "Mine"], ["2", "<b>Theirs</b>"]])
            expect(rows[0]![3]).toBe("AI (builtin, off)")
            // One line per account, named; the legend names them too.
            expect(
              yield* Effect.promise(() => page.$$eval("svg.chart polyline title", (ts) => ts.map((t) => t.textContent)))
            )
              .toEqual(["Mine", "<b>Theirs</b>"])
            expect(yield* Effect.promise(() => page.$$eval("ul.legend li", (lis) => lis.map((li) => li.textContent))))
              .toEqual(["Mine", "<b>Theirs</b>"])
            // Another window asks again.
            const asked = Effect.promise(() =>
              page.waitForRequest((request) => request.url().includes("/api/arena/leaderboard?window=24h"))
            )
            const [request] = yield* Effect.all([
              asked,
              Effect.promise(() => page.selectOption("select[name=window]", "24h"))
            ], {
              concurrency: 2
            })
            expect(request.url()).toContain("window=24h")
            expect(yield* Effect.promise(() => page.$$eval(".error", (errors) => errors.map((e) => e.textContent))))
              .toEqual([])
          }).pipe(Effect.scoped),
        { timeout: 120_000 }
      )

      it.effect.skipIf(!withChromium)(
        "in Chromium: an AI account's decision log follows a round run from its button: the prompt, the answer, the decisions",
        () =>
          Effect.gen(function*() {
            const origin = yield* baseUrl
            const user = yield* signUp("decisions")
            const account = yield* createAccount(user.token, { name: "Analyst" })
            yield* createAccount(user.token, { name: "By hand", account_type: "MANUAL" })
            const b = yield* browser
            const page = yield* Effect.promise(() => b.newPage())
            yield* logIn(page, origin, user)
            yield* Effect.promise(async () => {
              await page.click("nav button:text('Accounts')")
              await page.waitForSelector("section.decision-log p[role=status]:text('No decision rounds yet.')")
            })
            // Only the AI account has a log.
            expect(yield* Effect.promise(() => page.$$("section.decision-log"))).toHaveLength(1)
            yield* Effect.promise(async () => {
              await page.click("section.decision-log button:text('Decide now')")
              await page.waitForSelector("details.round summary:text-matches('manual · (traded|no_trade)')", {
                timeout: 60_000
              })
              await page.click("details.round summary")
            })
            const [prompt, answer] = yield* Effect.promise(() =>
              page.$$eval("details.round pre", (pres) => pres.map((pre) => pre.textContent!))
            )
            expect(prompt).toContain("BTC")
            expect(JSON.parse(answer!).decisions.length).toBeGreaterThan(0)
            const rows = yield* Effect.promise(() => page.$$eval("details.round tbody tr", (trs) => trs.length))
            expect(rows).toBeGreaterThan(0)
            // What the page shows is what the API logged.
            const logged = (yield* call("GET", `/api/account/${account.id}/decisions`, { token: user.token })).body
            expect(logged.decisions).toHaveLength(1)
            expect(logged.decisions[0].prompt).toBe(prompt)
          }).pipe(Effect.scoped),
        { timeout: 120_000 }
      )
    }
  )
})

describe("embedding hosts", () => {
  it("get the console only when they ask for it", { timeout: 90_000 }, async () => {
    const config = testOptions({ kind: "pglite", dataDir: "memory://" })
    for (const console of [false, true]) {
      const { dispose, handler } = makeWebHandler({ config, console })
      try {
        expect((await handler(new Request("http://host/console"))).status).toBe(console ? 200 : 404)
        expect((await handler(new Request("http://host/api/health"))).status).toBe(200)
      } finally {
        await dispose()
      }
    }
  })
})

describe("npm start", () => {
  it.live("serves the console, built from the sources, and CONSOLE=off turns it off", () =>
    Effect.gen(function*() {
      const on = yield* referenceServer([])
      const script = yield* Effect.promise(() => fetch(`${on}/console/app.js`))
      expect(script.status).toBe(200)
      expect((yield* Effect.promise(() => script.text())).length).toBeGreaterThan(1000)
      const off = yield* referenceServer(["--console", "off"])
      expect((yield* Effect.promise(() => fetch(`${off}/console`))).status).toBe(404)
      expect((yield* Effect.promise(() => fetch(`${off}/console/app.js`))).status).toBe(404)
      expect((yield* Effect.promise(() => fetch(`${off}/docs`))).status).toBe(200)
    }).pipe(Effect.scoped), 300_000)
})
