import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it, layer } from "@effect/vitest"
import { testOptions, testStorages } from "@trading-platform/core/testing"
import { ConsoleLive, makeWebHandler } from "@trading-platform/server"
import { Duration, Effect, Layer, TestClock } from "effect"
import { appBudget, buildConsole, editorBudget } from "../../src/console/ConsoleBuild.js"
import { createAccount, venue2Keys, wallet } from "../support/Accounts.js"
import { AutomationServer, waitForList } from "../support/Automation.js"
import { BacktestServer } from "../support/Backtests.js"
import { browser, hasChromium } from "../support/Chromium.js"
import { smaProgram } from "../support/Optimizations.js"
import { referenceServer } from "../support/ServerProcess.js"
import { baseUrl, call, signUp, uniqueUser } from "../support/TestServer.js"
import { cells, drawnChart, editorText, fillCode, goTo, logIn, openPage, shoot } from "./ConsoleBrowser.js"

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
    "names its files by their content, puts the chart library and the code editor in chunks of their own, and keeps the rest and the editor within budget",
    {
      timeout: 60_000
    },
    async () => {
      const assets = await buildConsole()
      expect(assets.script).toMatch(/^app-[A-Z0-9]{8}\.js$/)
      expect(assets.style).toMatch(/^app-[A-Z0-9]{8}\.css$/)
      expect(Object.keys(assets.files).every((name) => /^(app|chunk)-[A-Z0-9]{8}\.(js|css)$/.test(name))).toBe(true)
      expect(assets.sizes.charts).toBeGreaterThan(20_000)
      expect(assets.sizes.editor).toBeGreaterThan(20_000)
      expect(assets.sizes.editor).toBeLessThanOrEqual(editorBudget)
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
          })
          yield* fillCode(page, "export function decide(data) {\n  return { operation: \"hold\" \n}}}")
          yield* Effect.promise(async () => {
            await page.click("form.editor button[type=submit]")
            await page.waitForSelector("form.editor .compile-line")
          })
          expect(yield* Effect.promise(() => page.textContent("form.editor .compile-line"))).toMatch(/^Line \d+/)
          expect(yield* Effect.promise(() => page.textContent("form.editor [role=alert]"))).toContain(
            "(program_invalid)"
          )
          // The browser logs the 422 as a failed request; the page shows it where the action was.
          failures.splice(0)
          yield* fillCode(page, crossover)
          yield* Effect.promise(async () => {
            await page.click("form.editor button[type=submit]")
            await page.waitForSelector("ul.list button[data-id][aria-current=true]")
            await page.waitForSelector("form.run")
          })
          expect(yield* editorText(page)).toBe(crossover)

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

          // The trades a page at a time; the pager names the rows on screen, so while the next
          // page is on its way (held back here) it still says 1–20.
          yield* Effect.promise(() => page.waitForSelector("section.trades tbody tr"))
          const first = yield* cells(page, "section.trades tbody tr")
          expect(first).toHaveLength(20)
          expect(first[0]![9]).toBe(backtest.trades[0].exit_reason)
          yield* Effect.promise(async () => {
            const secondPage = (url: URL) => url.pathname.endsWith("/trades") && url.searchParams.get("offset") === "20"
            await page.route(secondPage, async (route) => {
              await new Promise((resolve) => setTimeout(resolve, 500))
              await route.continue()
            })
            await Promise.all([
              page.waitForRequest((request) => secondPage(new URL(request.url()))),
              page.click("section.trades .pager button:text('Next')")
            ])
            expect(await page.textContent("section.trades .pager span")).toMatch(/^1–20/)
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
          yield* Effect.promise(async () => {
            await page.click("section.optimization button:text('Delete optimisation')")
            await page.click(`section.optimization button:text('Delete optimisation #${optimization.id} for good')`)
            await page.locator("section.optimization").waitFor({ state: "detached" })
          })
          expect((yield* call("GET", `/api/programs/${created.body.id}/optimizations`, { token: user.token })).body)
            .toMatchObject({ optimizations: [] })
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
      "in Chromium: an account is created with its venue settings, edited, given a venue1 wallet (then tested) and venue2 keys, and deleted from the accounts view",
      () =>
        Effect.gen(function*() {
          const origin = yield* baseUrl
          const user = yield* signUp("account-crud")
          const { failures, page } = yield* openPage(yield* browser, origin)
          yield* logIn(page, origin, user, "accounts")
          const accounts = () =>
            call("GET", "/api/account/list", { token: user.token }).pipe(
              Effect.map((reply) => reply.body as Array<any>)
            )
          const created = page.locator("form[aria-label='New account']")
          yield* Effect.promise(async () => {
            await page.click("button:text-is('New account')")
            await created.locator("input[name=name]").fill("Desk")
            await created.locator("select[name=account_type]").selectOption("MANUAL")
            await created.locator("input[name=initial_capital]").fill("2500")
            await created.locator("input[name=default_leverage]").fill("3")
            await created.locator("input[name=max_leverage]").fill("10")
            await created.locator("select[name=margin_mode]").selectOption("cross")
            await created.locator("input[name=venue1_enabled]").check()
            await created.locator("select[name=venue1_environment]").selectOption("paper")
            await created.locator("button:text('Create account')").click()
            await page.locator("article.account h3", { hasText: "Desk" }).waitFor()
          })
          expect(yield* Effect.promise(() => page.$$("form[aria-label='New account']"))).toEqual([])
          const [desk] = yield* accounts()
          expect(desk).toMatchObject({
            name: "Desk",
            account_type: "MANUAL",
            initial_capital: 2500,
            default_leverage: 3,
            max_leverage: 10,
            margin_mode: "cross",
            venue1_enabled: true,
            venue1_environment: "paper"
          })

          const card = page.locator(`article.account[data-id='${desk.id}']`)
          const edit = card.locator("form[aria-label='Edit Desk']")
          yield* Effect.promise(async () => {
            await card.locator("button:text('Edit account')").click()
            expect(await edit.locator("input[name=max_leverage]").inputValue()).toBe("10")
            await edit.locator("input[name=name]").fill("Desk two")
            await edit.locator("input[name=max_leverage]").fill("20")
            await edit.locator("input[name=show_on_dashboard]").uncheck()
            await edit.locator("button:text('Save account')").click()
            await card.locator("h3", { hasText: "Desk two" }).waitFor()
          })
          expect((yield* accounts())[0]).toMatchObject({ name: "Desk two", max_leverage: 20, show_on_dashboard: false })
          expect(yield* Effect.promise(() => card.locator("p.settings").textContent())).toContain("off the dashboard")

          const walletForm = card.locator("form[aria-label='venue1 wallet']")
          yield* Effect.promise(async () => {
            await card.locator("button:text('Venue setup')").click()
            await walletForm.locator("select[name=environment]").selectOption("testnet")
            await walletForm.locator("input[name=wallet_address]").fill(wallet.wallet_address)
            await walletForm.locator("input[name=private_key]").fill(wallet.private_key)
            await walletForm.locator("button:text('Store wallet')").click()
            await card.locator("p.settings", { hasText: "venue1 wallet stored" }).waitFor()
            // The setup stays open, now with the stored wallet's test.
            await card.locator("button:text('Test wallet')").click()
            await card.locator("p.actions [role=status]:not(:empty)").waitFor()
          })
          expect(yield* Effect.promise(() => walletForm.locator("input[name=private_key]").inputValue())).toBe("")
          const keysForm = card.locator("form[aria-label='venue2 keys']")
          yield* Effect.promise(async () => {
            await keysForm.locator("input[name=api_key]").fill(venue2Keys.api_key)
            await keysForm.locator("input[name=secret_key]").fill(venue2Keys.secret_key)
            await keysForm.locator("button:text('Check and store venue2 keys')").click()
            await card.locator("p.settings", { hasText: "venue2 keys stored" }).waitFor()
          })
          expect((yield* accounts())[0]).toMatchObject({
            has_venue1_wallet: true,
            venue1_environment: "testnet",
            has_venue2_keys: true
          })
          yield* shoot(page, "accounts-edit")
          yield* Effect.promise(async () => {
            await card.locator("button:text('Close venue setup')").click()
            await walletForm.waitFor({ state: "detached" })
          })

          yield* Effect.promise(async () => {
            await card.locator("button:text('Delete account')").click()
            await card.locator("button:text('Delete account Desk two for good')").click()
            await card.waitFor({ state: "detached" })
          })
          expect(yield* accounts()).toEqual([])
          expect(yield* Effect.promise(() => page.textContent("#view"))).toContain("No accounts yet.")
          expect(failures).toEqual([])
        }).pipe(Effect.scoped),
      { timeout: 120_000 }
    )

    it.effect.skipIf(!withChromium)(
      "in Chromium: a signal and a pool over it are created, edited and deleted from the signals view; a signal in a pool is not, and says why beside its button",
      () =>
        Effect.gen(function*() {
          const origin = yield* baseUrl
          const user = yield* signUp("signal-crud")
          const listed = (yield* call("GET", "/api/market/symbols", { token: user.token })).body.symbols
            .map((s: { symbol: string }) => s.symbol) as Array<string>
          const [first, second] = [listed[0]!, listed[1]!]
          const { failures, page } = yield* openPage(yield* browser, origin)
          yield* logIn(page, origin, user, "signals")
          const listing = () =>
            call("GET", "/api/signals", { token: user.token }).pipe(Effect.map((reply) => reply.body))

          const newSignal = page.locator("form[aria-label='New signal']")
          yield* Effect.promise(async () => {
            await page.click("button:text-is('New signal')")
            await newSignal.locator("input[name=signal_name]").fill("Jumps")
            await newSignal.locator("select[name=metric]").selectOption("price_change")
            await newSignal.locator("select[name=operator]").selectOption("gt")
            await newSignal.locator("input[name=threshold]").fill("2")
            await newSignal.locator("select[name=time_window]").selectOption("1h")
            await newSignal.locator("button:text('Create signal')").click()
            await page.locator("table.signals tbody tr", { hasText: "Jumps" }).waitFor()
          })
          const [signal] = (yield* listing()).signals
          expect(signal).toMatchObject({
            signal_name: "Jumps",
            exchange: "venue1",
            trigger_condition: { metric: "price_change", operator: "gt", threshold: 2, time_window: "1h" },
            enabled: true
          })
          const editSignal = page.locator("form[aria-label='Edit Jumps']")
          yield* Effect.promise(async () => {
            await page.click("button[aria-label='Edit signal Jumps']")
            await editSignal.locator("input[name=signal_name]").fill("Leaps")
            await editSignal.locator("input[name=threshold]").fill("3.5")
            await editSignal.locator("select[name=time_window]").selectOption("4h")
            await editSignal.locator("button:text('Save signal')").click()
            await page.locator("table.signals tbody tr", { hasText: "price_change gt 3.5 over 4h" }).waitFor()
          })
          expect((yield* listing()).signals[0]).toMatchObject({
            id: signal.id,
            signal_name: "Leaps",
            trigger_condition: { threshold: 3.5, time_window: "4h" }
          })

          const newPool = page.locator("form[aria-label='New pool']")
          yield* Effect.promise(async () => {
            await page.click("button:text-is('New pool')")
            await newPool.locator("input[name=pool_name]").fill("Majors")
            await newPool.locator("input[name=symbols]").fill(`${first}, ${second}`)
            await newPool.locator("select[name=logic]").selectOption("OR")
            await newPool.getByLabel("Leaps").check()
            await newPool.locator("button:text('Create pool')").click()
            await page.locator("table.pools tbody tr", { hasText: "Majors" }).waitFor()
          })
          const [pool] = (yield* listing()).pools
          expect(pool).toMatchObject({
            pool_name: "Majors",
            symbols: [first, second],
            logic: "OR",
            signal_ids: [signal.id]
          })
          const editPool = page.locator("form[aria-label='Edit Majors']")
          yield* Effect.promise(async () => {
            await page.click("button[aria-label='Edit pool Majors']")
            await editPool.locator("input[name=pool_name]").fill("Major")
            await editPool.locator("input[name=symbols]").fill(first)
            await editPool.locator("input[name=enabled]").uncheck()
            await editPool.locator("button:text('Save pool')").click()
            await page.locator("table.pools tbody tr", { hasText: "Major" }).filter({ hasText: "false" }).waitFor()
          })
          expect((yield* listing()).pools[0]).toMatchObject({
            id: pool.id,
            pool_name: "Major",
            symbols: [first],
            enabled: false
          })
          yield* shoot(page, "signals")

          // The pool lists the signal: the API refuses its deletion, and the page says so beside the button.
          const signalRow = page.locator("table.signals tbody tr", { hasText: "Leaps" })
          yield* Effect.promise(async () => {
            await signalRow.locator("button:text('Delete signal')").click()
            await signalRow.locator("button:text('Delete signal Leaps for good')").click()
            await signalRow.locator("[role=alert]").waitFor()
          })
          expect(yield* Effect.promise(() => signalRow.locator("[role=alert]").textContent())).toContain(
            "(signal_in_use)"
          )
          failures.splice(0)

          const poolRow = page.locator("table.pools tbody tr", { hasText: "Major" })
          yield* Effect.promise(async () => {
            await poolRow.locator("button:text('Delete pool')").click()
            await poolRow.locator("button:text('Delete pool Major for good')").click()
            await page.locator("p:text('No signal pools yet.')").waitFor()
            await signalRow.locator("button:text('Delete signal Leaps for good')").click()
            await page.locator("p:text('No signals yet.')").waitFor()
          })
          expect(yield* listing()).toEqual({ pools: [], signals: [] })
          expect(failures).toEqual([])
        }).pipe(Effect.scoped),
      { timeout: 120_000 }
    )

    it.effect.skipIf(!withChromium)(
      "in Chromium: a program is bound to an account, its binding edited and deleted from the program's view",
      () =>
        Effect.gen(function*() {
          const origin = yield* baseUrl
          const user = yield* signUp("binding-crud")
          const program = (yield* call("POST", "/api/programs", {
            token: user.token,
            body: { name: "Crossover", code: crossover }
          })).body
          const account = yield* createAccount(user.token, { name: "Runner", max_leverage: 5 })
          const pool = (yield* call("POST", "/api/signals/pools", {
            token: user.token,
            body: { pool_name: "Watch", symbols: ["BTC"] }
          })).body
          const { failures, page } = yield* openPage(yield* browser, origin)
          yield* logIn(page, origin, user)
          const bindings = () =>
            call("GET", `/api/programs/${program.id}/bindings`, { token: user.token }).pipe(
              Effect.map((reply) => reply.body.bindings as Array<any>)
            )
          const form = page.locator("form[aria-label='New binding']")
          yield* Effect.promise(async () => {
            await page.click("button:text-is('New binding')")
            await form.locator("select[name=account_id]").selectOption(String(account.id))
            await form.locator("input[name=symbols]").fill("BTC")
            await form.locator("select[name=timeframe]").selectOption("15m")
            await form.getByRole("checkbox", { name: "4h", exact: true }).check()
            await form.locator("input[name=interval_minutes]").fill("30")
            await form.locator("input[name=leverage]").fill("2")
            await form.locator("textarea[name=params]").fill("{\"fast\": 5}")
            await form.locator("button:text('Create binding')").click()
            await page.locator("section.bindings tbody tr", { hasText: "Runner" }).waitFor()
          })
          const [binding] = yield* bindings()
          expect(binding).toMatchObject({
            account_id: account.id,
            symbols: ["BTC"],
            timeframe: "15m",
            timeframes: ["4h"],
            interval_minutes: 30,
            leverage: 2,
            params: { fast: 5 },
            enabled: true
          })

          const edit = page.locator(`form[aria-label='Edit binding #${binding.id}']`)
          yield* Effect.promise(async () => {
            await page.click(`button[aria-label='Edit binding #${binding.id}']`)
            await edit.locator("input[name=interval_minutes]").fill("")
            await edit.getByLabel("Watch").check()
            await edit.locator("input[name=enabled]").uncheck()
            await edit.locator("button:text('Save binding')").click()
            await page.locator("section.bindings tbody tr", { hasText: "Watch" }).waitFor()
          })
          expect((yield* bindings())[0]).toMatchObject({
            id: binding.id,
            interval_minutes: null,
            signal_pool_ids: [pool.id],
            enabled: false
          })
          yield* Effect.promise(() => page.locator("section.bindings").evaluate((section) => section.scrollIntoView()))
          yield* shoot(page, "bindings")

          const row = page.locator("section.bindings tbody tr", { hasText: "Runner" })
          yield* Effect.promise(async () => {
            await row.locator("button:text('Delete binding')").click()
            await row.locator(`button:text('Delete binding #${binding.id} for good')`).click()
            await page.locator("section.bindings p:text('Not bound to any account.')").waitFor()
          })
          expect(yield* bindings()).toEqual([])
          expect(failures).toEqual([])
        }).pipe(Effect.scoped),
      { timeout: 120_000 }
    )

    it.effect.skipIf(!withChromium)(
      "in Chromium: a news source is created (a refused address named beside its field), edited and deleted from the news view",
      () =>
        Effect.gen(function*() {
          const origin = yield* baseUrl
          const user = yield* signUp("news-crud")
          const { failures, page } = yield* openPage(yield* browser, origin)
          yield* logIn(page, origin, user, "news")
          const sources = () =>
            call("GET", "/api/news/sources", { token: user.token }).pipe(
              Effect.map((reply) => reply.body.sources as Array<any>)
            )
          const before = (yield* sources()).length
          yield* Effect.promise(() => page.locator("table.sources tbody tr").nth(before - 1).waitFor())
          // The server refuses the address; its envelope's issue names the field.
          const refused = yield* call("POST", "/api/news/sources", {
            token: user.token,
            body: { name: "Local", url: "http://127.0.0.1/feed.xml" }
          })
          expect(refused.status).toBe(400)
          const form = page.locator("form[aria-label='New news source']")
          const besideUrl = form.locator("label:has([name=url]) .field-error")
          yield* Effect.promise(async () => {
            await page.click("button:text-is('New news source')")
            await form.locator("input[name=name]").fill("Local")
            await form.locator("input[name=url]").fill("http://127.0.0.1/feed.xml")
            await form.locator("button:text('Create source')").click()
            await besideUrl.waitFor()
          })
          expect(yield* Effect.promise(() => besideUrl.textContent())).toBe(refused.body.issues[0].message)
          expect(refused.body.issues[0].path).toBe("url")
          failures.splice(0)
          yield* Effect.promise(async () => {
            await form.locator("input[name=name]").fill("Example")
            await form.locator("input[name=url]").fill("https://example.com/feed.xml")
            await form.locator("button:text('Create source')").click()
            await page.locator("table.sources tbody tr", { hasText: "Example" }).waitFor()
          })
          const created = (yield* sources()).find((s) => s.name === "Example")
          expect(created).toMatchObject({ url: "https://example.com/feed.xml", enabled: true })

          const edit = page.locator("form[aria-label='Edit Example']")
          yield* Effect.promise(async () => {
            await page.click("button[aria-label='Edit source Example']")
            await edit.locator("input[name=name]").fill("Example feed")
            await edit.locator("input[name=enabled]").uncheck()
            await edit.locator("button:text('Save source')").click()
            await page.locator("table.sources tbody tr", { hasText: "Example feed" }).filter({ hasText: "false" })
              .waitFor()
          })
          expect((yield* sources()).find((s) => s.id === created.id)).toMatchObject({
            name: "Example feed",
            enabled: false
          })
          yield* shoot(page, "news")

          const row = page.locator("table.sources tbody tr", { hasText: "Example feed" })
          yield* Effect.promise(async () => {
            await row.locator("button:text('Delete source')").click()
            await row.locator("button:text('Delete source Example feed for good')").click()
            await row.waitFor({ state: "detached" })
          })
          expect((yield* sources()).map((s) => s.id)).not.toContain(created.id)
          expect(yield* sources()).toHaveLength(before)
          expect(failures).toEqual([])
        }).pipe(Effect.scoped),
      { timeout: 120_000 }
    )

    it.effect.skipIf(!withChromium)(
      "in Chromium: the API's validation messages show beside the field they name: an account's leverage over the venue's cap, a pool's unlisted symbol, a binding without a trigger",
      () =>
        Effect.gen(function*() {
          const origin = yield* baseUrl
          const user = yield* signUp("invalid")
          yield* call("POST", "/api/programs", { token: user.token, body: { name: "Crossover", code: crossover } })
          yield* createAccount(user.token, { name: "Runner" })
          const { failures, page } = yield* openPage(yield* browser, origin)
          yield* logIn(page, origin, user, "accounts")
          const beside = (form: string, field: string) =>
            page.locator(`form[aria-label='${form}'] label:has([name=${field}]) .field-error`)

          // What the API answers for the same account.
          const refused = yield* call("POST", "/api/account", {
            token: user.token,
            body: { name: "Too much", max_leverage: 500 }
          })
          expect(refused.status).toBe(422)
          yield* Effect.promise(async () => {
            await page.click("button:text-is('New account')")
            await page.fill("form[aria-label='New account'] input[name=name]", "Too much")
            await page.fill("form[aria-label='New account'] input[name=max_leverage]", "500")
            await page.click("form[aria-label='New account'] button:text('Create account')")
            await beside("New account", "max_leverage").waitFor()
          })
          expect(yield* Effect.promise(() => beside("New account", "max_leverage").textContent())).toBe(
            refused.body.error
          )
          expect(
            yield* Effect.promise(() =>
              page.getAttribute("form[aria-label='New account'] input[name=max_leverage]", "aria-invalid")
            )
          ).toBe("true")
          // Only that field is marked; the envelope's message and code are where the action was.
          expect(yield* Effect.promise(() => page.$$("form[aria-label='New account'] .field-error"))).toHaveLength(1)
          expect(
            yield* Effect.promise(() => page.textContent("form[aria-label='New account'] > [role=alert]"))
          ).toBe(`${refused.body.error} (leverage_too_high)`)
          yield* shoot(page, "accounts-invalid")

          yield* goTo(page, "Signals")
          yield* Effect.promise(async () => {
            await page.click("button:text-is('New pool')")
            await page.fill("form[aria-label='New pool'] input[name=pool_name]", "Nowhere")
            await page.fill("form[aria-label='New pool'] input[name=symbols]", "BTC, NOPE")
            await page.click("form[aria-label='New pool'] button:text('Create pool')")
            await beside("New pool", "symbols").waitFor()
          })
          expect(yield* Effect.promise(() => beside("New pool", "symbols").textContent())).toContain("NOPE")

          yield* goTo(page, "Programs")
          yield* Effect.promise(async () => {
            await page.click("button:text-is('New binding')")
            await page.fill("form[aria-label='New binding'] input[name=interval_minutes]", "")
            await page.click("form[aria-label='New binding'] button:text('Create binding')")
            await beside("New binding", "interval_minutes").waitFor()
          })
          expect(yield* Effect.promise(() => beside("New binding", "interval_minutes").textContent())).toBe(
            "give interval_minutes, signal_pool_ids, or both"
          )
          // The browser logs the refused requests themselves; the page logged nothing else.
          expect(failures.filter((f) => !/status of (422|400)/.test(f))).toEqual([])
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
            // A difference the reconciliation found (it runs against venues, which this server does
            // not reach): the view shows what the API lists.
            const sql = yield* SqlClient.SqlClient
            yield* sql`INSERT INTO reconciliation_events ${
              sql.insert({
                account_id: manual.id,
                exchange: "venue2",
                kind: "position_adopted",
                symbol: "ETH",
                order_id: null,
                ledger_size: 0,
                venue_size: -0.5,
                message: "The venue holds a short of 0.5 ETH the ledger did not: adopted",
                created_at: new Date()
              })
            }`
            const listed = yield* call("GET", `/api/account/${manual.id}/reconciliations`, { token: user.token })
            expect(listed.body.reconciliations).toHaveLength(1)
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
            // Its reconciliation events; the other account has none.
            expect(
              (yield* cells(page, "article.account:has-text('By hand') section.reconciliations tbody tr")).map((row) =>
                row.slice(1)
              )
            ).toEqual([["venue2", "position_adopted", "ETH", "0", "-0.5", listed.body.reconciliations[0].message]])
            yield* Effect.promise(() =>
              page.locator("article.account", { hasText: "Analyst" }).locator("p:text('No reconciliation events.')")
                .waitFor()
            )
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

            // The AI trader's settings, changed from its form.
            const trader = analyst.locator("form[aria-label='AI trader']")
            yield* Effect.promise(async () => {
              await analyst.locator("button:text('Edit AI trader')").click()
              await trader.locator("input[name=symbols]").fill("btc")
              await trader.locator("input[name=interval_minutes]").fill("30")
              await trader.locator("input[name=max_rounds_per_hour]").fill("4")
              await trader.locator("button:text('Save AI trader')").click()
              await trader.waitFor({ state: "detached" })
              await analyst.locator("section.ai-trader p", { hasText: "every 30 min" }).waitFor()
            })
            expect((yield* call("GET", `/api/account/${account.id}/ai-trader`, { token: user.token })).body)
              .toMatchObject({ symbols: ["BTC"], interval_minutes: 30, max_rounds_per_hour: 4 })

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
