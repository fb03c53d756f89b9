import { describe, expect, it, layer } from "@effect/vitest"
import { testOptions, testStorages } from "@trading-platform/core/testing"
import { ConsoleLive, makeWebHandler } from "@trading-platform/server"
import { Duration, Effect, Layer, TestClock } from "effect"
import { appBudget, buildConsole } from "../../src/console/ConsoleBuild.js"
import { createAccount } from "../support/Accounts.js"
import { AutomationServer, waitForList } from "../support/Automation.js"
import { BacktestServer } from "../support/Backtests.js"
import { browser, hasChromium } from "../support/Chromium.js"
import { smaProgram } from "../support/Optimizations.js"
import { referenceServer } from "../support/ServerProcess.js"
import { baseUrl, call, signUp, uniqueUser } from "../support/TestServer.js"
import { cells, drawnChart, goTo, logIn, openPage, shoot } from "./ConsoleBrowser.js"

const withChromium = hasChromium("the console browser tests are")

const crossover = `export function decide(data) {
  const fast = ta.sma(data.candles, 10), slow = ta.sma(data.candles, 30)
  if (slow === null) return { operation: "hold" }
  if (fast > slow && data.position?.side !== "long") return { operation: "buy", target_portion_of_balance: 0.5 }
  if (fast < slow && data.position?.side !== "short") return { operation: "sell", target_portion_of_balance: 0.5 }
  return { operation: "hold" }
}`

// The charts' colours (app/Chart.tsx): the first line, and a rising candle.
const blue = "#2563eb"
const green = "#16a34a"

describe("the console's build", () => {
  it(
    "names its files by their content, puts the chart library in a chunk of its own, and keeps the rest within budget",
    {
      timeout: 60_000
    },
    async () => {
      const assets = await buildConsole()
      expect(assets.script).toMatch(/^app-[A-Z0-9]{8}\.js$/)
      expect(assets.style).toMatch(/^app-[A-Z0-9]{8}\.css$/)
      expect(Object.keys(assets.files).every((name) => /^(app|chunk)-[A-Z0-9]{8}\.(js|css)$/.test(name))).toBe(true)
      expect(assets.sizes.charts).toBeGreaterThan(20_000)
      expect(assets.sizes.app).toBeLessThanOrEqual(appBudget)
    }
  )
})

describe("the web console", () => {
  // With backtest workers, on a test clock at a time the simulated market has closed candles for.
  layer(BacktestServer(testStorages[0]!).pipe(Layer.provide(ConsoleLive)), { timeout: "180 seconds" })((it) => {
    it.effect("GET /console answers the page with a strict Content-Security-Policy, and its files by hashed names, cached for good", () =>
      Effect.gen(function*() {
        const page = yield* call("GET", "/console")
        expect(page.status).toBe(200)
        expect(page.headers.get("content-type")).toContain("text/html")
        expect(page.headers.get("cache-control")).toBe("no-cache")
        const csp = page.headers.get("content-security-policy")!
        expect(csp).toContain("default-src 'none'")
        expect(csp).toContain("script-src 'self'")
        expect(csp).toContain("style-src 'self'")
        expect(csp).toContain("connect-src 'self'")
        expect(csp).not.toContain("unsafe")
        expect(page.headers.get("x-content-type-options")).toBe("nosniff")
        const script = page.text.match(/<script type="module" src="console\/(app-\w+\.js)">/)![1]!
        const style = page.text.match(/<link rel="stylesheet" href="console\/(app-\w+\.css)">/)![1]!
        // No inline script or style: the CSP would refuse them.
        expect(page.text).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/)
        expect(page.text).not.toMatch(/<style|\sstyle=/)
        // At /console/ the files are relative to the page itself.
        expect((yield* call("GET", "/console/")).text).toContain(`src="${script}"`)

        const code = yield* call("GET", `/console/${script}`)
        expect(code.status).toBe(200)
        expect(code.headers.get("content-type")).toContain("text/javascript")
        expect(code.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
        // The Promise client is bundled in: the page calls the API through it.
        expect(code.text).toContain("TradingApiError")
        const css = yield* call("GET", `/console/${style}`)
        expect(css.headers.get("content-type")).toContain("text/css")
        expect(css.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")

        // The unhashed names lead to the current files.
        const origin = yield* baseUrl
        const stable = yield* Effect.promise(() => fetch(`${origin}/console/app.js`, { redirect: "manual" }))
        expect(stable.status).toBe(302)
        expect(stable.headers.get("location")).toBe(script)
        expect(stable.headers.get("cache-control")).toBe("no-cache")
        expect((yield* call("GET", "/console/app.css")).text).toBe(css.text)
        expect((yield* call("GET", "/console/other.js")).status).toBe(404)
      }))

    it.effect.skipIf(!withChromium)(
      "in Chromium: a failed login says why beside the form; registering from the form logs in",
      () =>
        Effect.gen(function*() {
          const origin = yield* baseUrl
          const user = uniqueUser("register")
          const { failures, page } = yield* openPage(yield* browser, origin)
          yield* Effect.promise(async () => {
            await page.goto(`${origin}/console`)
            await page.fill("input[name=email]", user.email)
            await page.fill("input[name=password]", user.password)
            await page.click("form button[type=submit]")
            await page.waitForSelector(".login form [role=alert]")
          })
          // The API's 401 is answered by the client, and logged by the browser as a failed request.
          failures.splice(0)
          expect(yield* Effect.promise(() => page.textContent(".login form [role=alert]"))).toContain("(unauthorized)")
          yield* shoot(page, "login")
          yield* Effect.promise(async () => {
            await page.click("button:text('Create an account')")
            await page.fill("input[name=username]", user.username)
            await page.click("form button[type=submit]")
            await page.waitForSelector("header nav")
            await page.waitForSelector(`header .who:text('${user.username}')`)
          })
          expect(yield* Effect.promise(() => page.textContent("#view"))).toContain("No programs yet")
          expect(failures).toEqual([])
        }).pipe(Effect.scoped),
      { timeout: 90_000 }
    )

    it.effect.skipIf(!withChromium)(
      "in Chromium: create a program (its compile error shown at its line), backtest it with a balance, fee and leverage, see the candles with its trades, equity and drawdown, and page through its trades",
      () =>
        Effect.gen(function*() {
          const origin = yield* baseUrl
          const user = yield* signUp("console")
          const b = yield* browser
          const { failures, page } = yield* openPage(b, origin)
          const requested: Array<string> = []
          page.on("request", (request) => requested.push(request.url()))
          yield* logIn(page, origin, user)

          yield* Effect.promise(async () => {
            await page.click("button:text('+ New program')")
            await page.fill("input[name=name]", "SMA crossover")
            await page.fill(
              "textarea[name=code]",
              "export function decide(data) {\n  return { operation: \"hold\" \n}}}"
            )
            await page.click("form.editor button[type=submit]")
            await page.waitForSelector("form.editor .compile-line")
          })
          expect(yield* Effect.promise(() => page.textContent("form.editor .compile-line"))).toMatch(/^Line \d+/)
          expect(yield* Effect.promise(() => page.textContent("form.editor [role=alert]"))).toContain(
            "(program_invalid)"
          )
          // The browser logs the 422 as a failed request; the page shows it where the action was.
          failures.splice(0)
          yield* Effect.promise(async () => {
            await page.fill("textarea[name=code]", crossover)
            await page.click("form.editor button[type=submit]")
            await page.waitForSelector("ul.list button[data-id][aria-current=true]")
            await page.waitForSelector("form.run")
          })
          expect(yield* Effect.promise(() => page.inputValue("textarea[name=code]"))).toBe(crossover)

          yield* Effect.promise(async () => {
            await page.fill("input[name=from]", "2025-01-01")
            await page.fill("input[name=to]", "2025-01-15")
            await page.fill("input[name=initial_balance]", "5000")
            await page.fill("input[name=fee_rate]", "0.001")
            await page.fill("input[name=leverage]", "2")
            await page.selectOption("select[name=timeframe]", "30m")
            await page.click("form.run button[type=submit]")
            await page.waitForSelector("section.backtest", { timeout: 90_000 })
          })
          expect(yield* Effect.promise(() => page.getAttribute("section.backtest", "data-status"))).toBe("completed")
          const programs = (yield* call("GET", "/api/programs", { token: user.token })).body.programs
          const history = yield* call("GET", `/api/programs/backtest/history?program_id=${programs[0].id}`, {
            token: user.token
          })
          const backtest = (yield* call("GET", `/api/programs/backtest/${history.body.backtests[0].id}`, {
            token: user.token
          })).body
          expect(backtest).toMatchObject({
            status: "completed",
            timeframe: "30m",
            initial_balance: 5000,
            fee_rate: 0.001,
            leverage: 2
          })
          expect(backtest.trades.length).toBeGreaterThan(20)

          // Candles with an entry and an exit marker per trade, and the equity and drawdown, drawn.
          const candles = "section.backtest .chart[aria-label^='Candles']"
          expect(yield* drawnChart(page, candles, 2, green)).toBeGreaterThan(50)
          expect(yield* Effect.promise(() => page.getAttribute(candles, "data-marker-count")))
            .toBe(String(backtest.trades.length * 2))
          expect(yield* drawnChart(page, "section.backtest .chart[aria-label^='Equity']", 2, blue)).toBeGreaterThan(200)

          // The trades a page at a time.
          yield* Effect.promise(() => page.waitForSelector("section.trades tbody tr"))
          const first = yield* cells(page, "section.trades tbody tr")
          expect(first).toHaveLength(20)
          expect(first[0]![9]).toBe(backtest.trades[0].exit_reason)
          yield* Effect.promise(async () => {
            await page.click("section.trades .pager button:text('Next')")
            await page.waitForSelector("section.trades .pager span:text-matches('^21–')")
          })
          const second = yield* cells(page, "section.trades tbody tr")
          expect(second).toHaveLength(Math.min(20, backtest.trades.length - 20))
          expect(second[0]![4]).toBe(
            backtest.trades[20].entry_price.toLocaleString("en-US", { maximumFractionDigits: 2 })
          )
          yield* Effect.promise(async () => {
            await page.click("section.trades .pager button:text('Previous')")
            await page.locator("section.backtest").evaluate((section) => section.scrollIntoView())
          })
          yield* shoot(page, "backtest")

          expect(failures).toEqual([])
          // The token never went into a URL.
          expect(requested.filter((url) => url.includes(user.token))).toEqual([])
        }).pipe(Effect.scoped),
      { timeout: 150_000 }
    )

    it.effect.skipIf(!withChromium)(
      "in Chromium: optimise two of a program's parameters, follow its progress, see the heatmap of the best objective by those two, and sort its trials",
      () =>
        Effect.gen(function*() {
          const origin = yield* baseUrl
          const user = yield* signUp("optimize")
          const created = yield* call("POST", "/api/programs", {
            token: user.token,
            body: { name: "SMA", code: smaProgram }
          })
          expect(created.status).toBe(201)
          const { failures, page } = yield* openPage(yield* browser, origin)
          yield* logIn(page, origin, user)
          yield* Effect.promise(async () => {
            await page.waitForSelector("form.optimize")
            await page.fill("input[name=opt_from]", "2025-01-01")
            await page.fill("input[name=opt_to]", "2025-01-15")
            await page.selectOption("select[name=objective]", "total_return")
            // fast and slow are searched (the first two declared), on 3 values each; size keeps its default.
            expect(await page.isChecked("input[name=search_fast]")).toBe(true)
            expect(await page.isChecked("input[name=search_size]")).toBe(false)
            await page.click("form.optimize button[type=submit]")
            await page.waitForSelector("section.optimization[data-status=completed]", { timeout: 90_000 })
            await page.waitForSelector("table.heatmap tbody tr")
          })
          const heatmap = yield* cells(page, "table.heatmap tbody tr")
          expect(heatmap.map((row) => row[0])).toEqual(["10", "55", "100"])
          expect(heatmap.every((row) => row.length === 4)).toBe(true)
          const optimization =
            (yield* call("GET", `/api/programs/${created.body.id}/optimizations`, { token: user.token }))
              .body.optimizations[0]
          expect(optimization.trials_done).toBe(optimization.trials_total)
          // The best cell is the best trial's objective.
          const best = Math.max(
            ...heatmap.flatMap((row) => row.slice(1)).filter((c) => c !== "–").map((c) => Number(c.replace(/,/g, "")))
          )
          expect(best).toBeCloseTo(optimization.result.best.objective, 2)

          yield* Effect.promise(async () => {
            await page.click("table.trials-table th[data-key=objective] button")
            await page.waitForSelector("table.trials-table th[data-key=objective][aria-sort=descending]")
            await page.waitForRequest((request) => request.url().includes("sort=objective&order=desc")).catch(() =>
              undefined
            )
          })
          yield* Effect.promise(() =>
            page.waitForFunction(() => {
              const values = [...document.querySelectorAll("table.trials-table tbody tr td:nth-child(2)")]
                .map((td) => td.textContent!).filter((v) => v !== "–").map((v) => Number(v.replace(/,/g, "")))
              return values.length > 1 && values.every((v, i) => i === 0 || values[i - 1]! >= v)
            })
          )
          yield* Effect.promise(() =>
            page.locator("section.optimization").evaluate((section) => section.scrollIntoView())
          )
          yield* shoot(page, "optimization")
          expect(failures).toEqual([])
        }).pipe(Effect.scoped),
      { timeout: 150_000 }
    )

    it.effect.skipIf(!withChromium)(
      "in Chromium: the market view draws any listed symbol's candles on the timeframe chosen, and names an unlisted one beside the form",
      () =>
        Effect.gen(function*() {
          const origin = yield* baseUrl
          const user = yield* signUp("market")
          const { failures, page } = yield* openPage(yield* browser, origin)
          yield* logIn(page, origin, user, "market")
          const chart = ".chart[aria-label^='Candles of']"
          expect(yield* drawnChart(page, chart, 2, green)).toBeGreaterThan(50)
          expect(yield* Effect.promise(() => page.getAttribute(chart, "aria-label"))).toBe("Candles of BTC on 1h")
          const listed = (yield* call("GET", "/api/market/symbols", { token: user.token })).body.symbols
          const other = listed.map((s: { symbol: string }) => s.symbol).find((s: string) => s !== "BTC")
          yield* Effect.promise(async () => {
            await page.fill("input[name=symbol]", other)
            await page.click("form button:text('Show')")
            await page.selectOption("select[name=timeframe]", "4h")
            await page.waitForSelector(`.chart[aria-label='Candles of ${other} on 4h'][data-series-count]`)
          })
          expect(yield* drawnChart(page, chart, 2, green)).toBeGreaterThan(20)
          yield* shoot(page, "market")
          yield* Effect.promise(async () => {
            await page.fill("input[name=symbol]", "NOPE")
            await page.click("form button:text('Show')")
            await page.waitForSelector("form [role=alert]")
          })
          expect(yield* Effect.promise(() => page.textContent("form [role=alert]"))).toContain("(symbol_not_listed)")
          // The browser logs the refused request itself; the page logged nothing else.
          expect(failures.filter((f) => !f.includes("symbol=NOPE"))).toEqual([])
        }).pipe(Effect.scoped),
      { timeout: 120_000 }
    )

    it.effect.skipIf(!withChromium)(
      "in Chromium: the ranking table sorts by the column clicked",
      () =>
        Effect.gen(function*() {
          const origin = yield* baseUrl
          const user = yield* signUp("ranking")
          const { failures, page } = yield* openPage(yield* browser, origin)
          yield* logIn(page, origin, user)
          const column = (key: string) =>
            Effect.promise(async () => {
              const index = await page.$$eval(
                "table.ranking th",
                (ths, k) => ths.findIndex((th) => (th as HTMLElement).dataset.key === k),
                key
              )
              return page.$$eval(
                `table.ranking tbody tr td:nth-child(${index + 1})`,
                (tds) => tds.map((td) => td.textContent!)
              )
            })
          const click = (key: string) => Effect.promise(() => page.click(`table.ranking th[data-key="${key}"] button`))
          const sort = (key: string) =>
            Effect.promise(() => page.getAttribute(`table.ranking th[data-key="${key}"]`, "aria-sort"))
          yield* goTo(page, "Ranking")
          yield* Effect.promise(() => page.waitForSelector("table.ranking tbody tr", { timeout: 60_000 }))
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
          yield* shoot(page, "ranking")
          expect(failures).toEqual([])
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
          const { failures, page } = yield* openPage(yield* browser, origin)
          yield* logIn(page, origin, user)
          yield* Effect.promise(() => page.waitForSelector("ul.list button[data-id]"))
          expect(yield* Effect.promise(() => page.textContent("ul.list button[data-id]"))).toBe(name)
          expect(yield* Effect.promise(() => page.$$("ul.list img"))).toEqual([])
          expect(yield* Effect.promise(() => page.evaluate(() => (window as any).pwned))).toBeUndefined()

          yield* goTo(page, "Assistant")
          yield* Effect.promise(async () => {
            await page.fill("textarea[name=message]", "How is BTC doing?")
            await page.click("form button[type=submit]")
            await page.waitForFunction(() => document.querySelector(".chat.answer")?.textContent?.length, null, {
              timeout: 60_000
            })
          })
          expect(yield* Effect.promise(() => page.textContent(".chat.question"))).toBe("How is BTC doing?")
          expect(yield* Effect.promise(() => page.$$eval(".error", (errors) => errors.map((e) => e.textContent))))
            .toEqual([])
          yield* shoot(page, "assistant")
          expect(failures).toEqual([])
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
        "in Chromium: the leaderboard draws every dashboard account's return on one chart and ranks them in a table",
        () =>
          Effect.gen(function*() {
            const origin = yield* baseUrl
            const user = yield* signUp("arena")
            const rival = yield* signUp("rival")
            yield* createAccount(user.token, { name: "Mine" })
            yield* createAccount(rival.token, { name: "<b>Theirs</b>" })
            yield* TestClock.adjust("1 hour")
            yield* waitForList(user.token, "/api/arena/leaderboard", "entries", (entries) => entries.length === 2)
            const { failures, page } = yield* openPage(yield* browser, origin)
            yield* logIn(page, origin, user, "arena")
            yield* Effect.promise(() => page.waitForSelector("table.leaderboard tbody tr", { timeout: 60_000 }))
            const rows = yield* cells(page, "table.leaderboard tbody tr")
            expect(rows.map((row) => row.slice(0, 2))).toEqual([["1", "Mine"], ["2", "<b>Theirs</b>"]])
            expect(rows[0]![3]).toBe("AI (builtin, off)")
            // One line per account on one chart; the legend names them.
            expect(yield* drawnChart(page, ".chart[aria-label^='Return of each account']", 2, blue)).toBeGreaterThan(50)
            expect(yield* Effect.promise(() => page.$$eval("ul.legend li", (lis) => lis.map((li) => li.textContent))))
              .toEqual(["Mine", "<b>Theirs</b>"])
            yield* shoot(page, "arena")
            // Another window asks again.
            const [request] = yield* Effect.all([
              Effect.promise(() =>
                page.waitForRequest((request) => request.url().includes("/api/arena/leaderboard?window=24h"))
              ),
              Effect.promise(() => page.selectOption("select[name=window]", "24h"))
            ], { concurrency: 2 })
            expect(request.url()).toContain("window=24h")
            expect(yield* Effect.promise(() => page.$$eval(".error", (errors) => errors.map((e) => e.textContent))))
              .toEqual([])
            expect(failures).toEqual([])
          }).pipe(Effect.scoped),
        { timeout: 120_000 }
      )

      it.effect.skipIf(!withChromium)(
        "in Chromium: an account shows its orders, its risk mode changes from its control, and an AI account's decision log follows a round run from its button",
        () =>
          Effect.gen(function*() {
            const origin = yield* baseUrl
            const user = yield* signUp("decisions")
            const account = yield* createAccount(user.token, { name: "Analyst" })
            const manual = yield* createAccount(user.token, { name: "By hand", account_type: "MANUAL" })
            const order = yield* call("POST", `/api/account/${manual.id}/orders`, {
              token: user.token,
              body: { symbol: "BTC", side: "buy", quantity: 0.01 }
            })
            expect(order.status).toBeLessThan(300)
            const { failures, page } = yield* openPage(yield* browser, origin)
            yield* logIn(page, origin, user, "accounts")
            // The order placed by hand, in its account's orders.
            const byHand = page.locator("article.account", { hasText: "By hand" })
            yield* Effect.promise(() => byHand.locator("section.orders tbody tr").first().waitFor())
            const orders = yield* Effect.promise(() =>
              byHand.locator("section.orders tbody tr").evaluateAll((trs) =>
                trs.map((tr) => [...tr.children].map((td) => td.textContent))
              )
            )
            expect(orders).toHaveLength(1)
            expect(orders[0]!.slice(1, 5)).toEqual(["BTC", "buy", "market", "0.01"])
            yield* Effect.promise(() =>
              page.waitForSelector("section.decision-log p[role=status]:text('No decision rounds yet.')")
            )
            // Only the AI account has a log.
            expect(yield* Effect.promise(() => page.$$("section.decision-log"))).toHaveLength(1)

            const analyst = page.locator("article.account", { hasText: "Analyst" })
            yield* Effect.promise(async () => {
              await analyst.locator("select[name=risk_mode]").selectOption("paused")
              await analyst.locator("button:text('Set mode')").click()
              await analyst.locator("form.risk-paused").waitFor()
            })
            const risk = yield* call("GET", `/api/account/${account.id}/risk`, { token: user.token })
            expect(risk.body.mode).toBe("paused")
            yield* Effect.promise(async () => {
              await analyst.locator("select[name=risk_mode]").selectOption("active")
              await analyst.locator("button:text('Set mode')").click()
              await analyst.locator("form.risk-active").waitFor()
            })

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
            yield* shoot(page, "accounts")
            expect(failures).toEqual([])
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
      const page = yield* Effect.promise(() => fetch(`${on}/console`).then((reply) => reply.text()))
      const script = page.match(/src="console\/(app-\w+\.js)"/)![1]!
      const code = yield* Effect.promise(() => fetch(`${on}/console/${script}`))
      expect(code.status).toBe(200)
      expect((yield* Effect.promise(() => code.text())).length).toBeGreaterThan(1000)
      const off = yield* referenceServer(["--console", "off"])
      expect((yield* Effect.promise(() => fetch(`${off}/console`))).status).toBe(404)
      expect((yield* Effect.promise(() => fetch(`${off}/console/${script}`))).status).toBe(404)
      expect((yield* Effect.promise(() => fetch(`${off}/docs`))).status).toBe(200)
    }).pipe(Effect.scoped), 300_000)
})
