import { describe, expect, layer } from "@effect/vitest"
import { testStorages } from "@trading-platform/core/testing"
import { ConsoleLive } from "@trading-platform/server"
import { Effect, Layer } from "effect"
import type { Page } from "playwright-core"
import { BacktestServer, shortRun, tradingProgram } from "../support/Backtests.js"
import { browser, hasChromium } from "../support/Chromium.js"
import { smaProgram } from "../support/Optimizations.js"
import { baseUrl, call, signUp } from "../support/TestServer.js"
import { cells, drawnChart, fillCode, logIn, openPage, shoot } from "./ConsoleBrowser.js"

const withChromium = hasChromium("the console's research browser tests are")

// A TypeScript program, and the same with its third line broken.
const typed = `export function decide(data: { candles: ReadonlyArray<{ close: number }> }) {
  const bars: number = data.candles.length
  return { operation: bars > 0 ? "hold" : "hold" }
}
`
const broken = typed.replace(`"hold" }\n}`, `"hold" ]\n}`)

// The colours the views draw with (app/BacktestView.tsx, app/Chart.tsx): the fan's median return,
// the backtest's own path through it, the first line of a chart.
const median = "#1d4ed8"
const orange = "#d97706"
const blue = "#2563eb"

/** A number as the console writes it (two decimals at most, thousands separated). */
const shown = (value: number) => value.toLocaleString("en-US", { maximumFractionDigits: 2 })

const createProgram = (token: string, body: Record<string, unknown>) =>
  Effect.gen(function*() {
    const created = yield* call("POST", "/api/programs", { token, body })
    expect(created.status).toBe(201)
    return created.body as { id: number; name: string }
  })

const promise = <A>(f: () => Promise<A>) => Effect.promise(f)

/** Fills the backtest form's market: BTC, hourly, the two weeks the simulated market has. */
const fillMarket = (page: Page, timeframe = "1h", from = "2025-01-01", to = "2025-01-15") =>
  promise(async () => {
    await page.selectOption("form.run select[name=timeframe]", timeframe)
    await page.fill("form.run input[name=from]", from)
    await page.fill("form.run input[name=to]", to)
  })

describe("the web console's research views", () => {
  layer(BacktestServer(testStorages[0]!).pipe(Layer.provide(ConsoleLive)), { timeout: "300 seconds" })((it) => {
    it.effect.skipIf(!withChromium)(
      "in Chromium: a TypeScript program in the code editor, highlighted, reached and left with Tab, edited from the keyboard; its compile error marked at the line the API names",
      () =>
        Effect.gen(function*() {
          const origin = yield* baseUrl
          const user = yield* signUp("editor")
          const program = yield* createProgram(user.token, { name: "Typed", code: typed, language: "typescript" })
          const { failures, page } = yield* openPage(yield* browser, origin)
          yield* logIn(page, origin, user)
          yield* promise(() => page.waitForSelector("form.editor .code-editor[data-ready] .cm-content"))
          expect(yield* promise(() => page.getAttribute("form.editor .code-editor", "data-language"))).toBe(
            "typescript"
          )
          expect(yield* promise(() => page.getAttribute("form.editor .cm-content", "aria-label"))).toBe("Code")
          // Highlighted: the keyword and the type name are coloured apart from the plain text.
          const colours = yield* promise(() =>
            page.$eval("form.editor .cm-content", (content) => {
              const colourOf = (text: string) => {
                const span = [...content.querySelectorAll("span")].find((s) => s.textContent === text)
                return span === undefined ? undefined : getComputedStyle(span).color
              }
              return { plain: getComputedStyle(content).color, export: colourOf("export"), number: colourOf("number") }
            })
          )
          expect(colours.export).toBeDefined()
          expect(colours.number).toBeDefined()
          expect(colours.export).not.toBe(colours.plain)
          expect(colours.number).not.toBe(colours.plain)

          // Tab from the language reaches the editor; typing there edits the code; Tab leaves it.
          yield* promise(async () => {
            await page.focus("form.editor select[name=language]")
            await page.keyboard.press("Tab")
          })
          expect(yield* promise(() => page.evaluate(() => document.activeElement?.getAttribute("aria-label")))).toBe(
            "Code"
          )
          yield* promise(async () => {
            await page.keyboard.press("ControlOrMeta+End")
            await page.keyboard.type("// kept")
            await page.keyboard.press("Tab")
          })
          expect(yield* promise(() => page.evaluate(() => document.activeElement?.textContent))).toBe("Save")
          yield* promise(async () => {
            await page.keyboard.press("Enter")
            await page.waitForSelector("form.editor [role=status]:text('Saved.')")
          })
          expect((yield* call("GET", `/api/programs/${program.id}`, { token: user.token })).body.code).toBe(
            `${typed}// kept`
          )

          // The API's compile error, at the line it names: tinted, marked in the gutter, named beside the form.
          const refused = yield* call("PUT", `/api/programs/${program.id}`, {
            token: user.token,
            body: { code: broken }
          })
          expect(refused.status).toBe(422)
          expect(refused.body.line).toBeGreaterThanOrEqual(3)
          yield* fillCode(page, broken)
          yield* promise(async () => {
            await page.click("form.editor button[type=submit]")
            await page.waitForSelector("form.editor .cm-error-line")
          })
          // The browser logs the 422 as a failed request; the page shows it where the action was.
          failures.splice(0)
          const marked = yield* promise(() =>
            page.$$eval("form.editor .cm-line", (lines) =>
              lines.flatMap((line, i) => line.matches(".cm-error-line") ? [i + 1] : []))
          )
          expect(marked).toEqual([refused.body.line])
          expect(
            yield* promise(() =>
              page.getAttribute("form.editor .cm-error-marker", "title")
            )
          ).toContain(
            "(program_invalid)"
          )
          expect(yield* promise(() => page.textContent("form.editor .compile-line"))).toMatch(
            new RegExp(`^Line ${refused.body.line}`)
          )
          expect(yield* promise(() => page.getAttribute("form.editor .code-host", "aria-invalid"))).toBe("true")
          yield* shoot(page, "program-editor")

          // Fixed, the mark goes and the code is saved.
          yield* fillCode(page, typed)
          expect(yield* promise(() => page.$$("form.editor .cm-error-line"))).toHaveLength(0)
          yield* promise(async () => {
            await page.click("form.editor button[type=submit]")
            await page.waitForSelector("form.editor [role=status]:text('Saved.')")
          })
          expect((yield* call("GET", `/api/programs/${program.id}`, { token: user.token })).body.code).toBe(typed)
          expect(failures).toEqual([])
        }).pipe(Effect.scoped),
      { timeout: 120_000 }
    )

    it.effect.skipIf(!withChromium)(
      "in Chromium: a program's parameters in a table and the backtest form (a value out of range named beside its field), the backtest's Monte Carlo fan, and its bias checks' verdicts",
      () =>
        Effect.gen(function*() {
          const origin = yield* baseUrl
          const user = yield* signUp("research")
          const program = yield* createProgram(user.token, { name: "SMA", code: smaProgram })
          const { failures, page } = yield* openPage(yield* browser, origin)
          yield* logIn(page, origin, user)
          yield* promise(() => page.waitForSelector("table.parameters tbody tr"))
          expect(yield* cells(page, "table.parameters tbody tr")).toEqual([
            ["fast", "int", "2 to 30", "5"],
            ["slow", "int", "10 to 100", "20"],
            ["size", "float", "0.1 to 1", "0.5"]
          ])

          // Out of its range: the API's message beside the parameter's field.
          const expected = yield* call("POST", `/api/programs/${program.id}/backtest`, {
            token: user.token,
            body: { ...shortRun, params: { fast: 500 } }
          })
          expect(expected.status).toBe(400)
          const issue = expected.body.issues.find((i: { path: string }) => i.path.endsWith("params.fast"))
          yield* fillMarket(page)
          yield* promise(async () => {
            await page.fill("form.run input[name=param_fast]", "500")
            await page.click("form.run button[type=submit]")
            await page.waitForSelector("form.run label:has(input[name=param_fast]) .field-error")
          })
          failures.splice(0)
          expect(yield* promise(() => page.textContent("form.run label:has(input[name=param_fast]) .field-error")))
            .toBe(
              issue.message
            )
          expect(yield* promise(() => page.getAttribute("form.run input[name=param_fast]", "aria-invalid"))).toBe(
            "true"
          )
          expect(yield* promise(() => page.$$("form.run label:has(input[name=param_slow]) .field-error"))).toHaveLength(
            0
          )

          // In range, the backtest runs with them, and its Monte Carlo fan is drawn.
          yield* promise(async () => {
            await page.fill("form.run input[name=param_fast]", "3")
            await page.fill("form.run input[name=param_size]", "0.8")
            await page.click("form.run button[type=submit]")
            await page.waitForSelector("section.backtest[data-status=completed]", { timeout: 90_000 })
          })
          const history = yield* call("GET", `/api/programs/backtest/history?program_id=${program.id}`, {
            token: user.token
          })
          const backtest = (yield* call("GET", `/api/programs/backtest/${history.body.backtests[0].id}`, {
            token: user.token
          })).body
          expect(backtest.params).toEqual({ fast: 3, slow: 20, size: 0.8 })
          expect(backtest.trades.length).toBeGreaterThan(2)
          const fan = "section.monte-carlo .chart"
          expect(yield* drawnChart(page, fan, 12, median)).toBeGreaterThan(20)
          expect(yield* drawnChart(page, fan, 12, orange)).toBeGreaterThan(20)
          const robustness = yield* call("POST", `/api/programs/backtest/${backtest.id}/robustness`, {
            token: user.token,
            body: { monte_carlo: { method: "resample" } }
          })
          expect(robustness.status).toBe(200)
          const mc = robustness.body.monte_carlo
          expect(yield* cells(page, "table.percentiles tbody tr")).toEqual([
            ["final return %", ...["p5", "p25", "p50", "p75", "p95"].map((p) => shown(mc.final_return_percent[p]))],
            ["max drawdown %", ...["p5", "p25", "p50", "p75", "p95"].map((p) => shown(mc.max_drawdown_percent[p]))]
          ])
          // Resampled, the final returns spread.
          expect(mc.final_return_percent.p95).toBeGreaterThan(mc.final_return_percent.p5)
          yield* promise(() => page.locator("section.monte-carlo").scrollIntoViewIfNeeded())
          yield* shoot(page, "backtest-monte-carlo")

          // A bias check on the form's market and parameters, its verdicts shown once its runs end.
          yield* promise(async () => {
            await page.click("form.run button:text('Check for bias')")
            await page.waitForSelector(".bias-check[data-status=passed], .bias-check[data-status=failed]", {
              timeout: 150_000
            })
          })
          const check = (yield* call("GET", `/api/programs/${program.id}/checks`, { token: user.token })).body.checks[0]
          expect(check.params).toMatchObject({ fast: 3, size: 0.8 })
          expect(check).toMatchObject({ symbol: "BTC", timeframe: "1h" })
          const verdicts = yield* cells(page, ".bias-check table.verdicts tbody tr")
          expect(verdicts.map((row) => row.slice(0, 2))).toEqual([
            ["lookahead", check.lookahead.verdict],
            ["warm-up", check.warmup.verdict]
          ])
          expect(yield* promise(() => page.getAttribute(".bias-check", "data-status"))).toBe(check.status)
          yield* promise(() => page.locator("section.bias-checks").scrollIntoViewIfNeeded())
          yield* shoot(page, "program-checks")
          expect(failures).toEqual([])
        }).pipe(Effect.scoped),
      { timeout: 280_000 }
    )

    it.effect.skipIf(!withChromium)(
      "in Chromium: a long backtest followed from the form is cancelled from it, and shows as cancelled",
      () =>
        Effect.gen(function*() {
          const origin = yield* baseUrl
          const user = yield* signUp("cancel")
          const program = yield* createProgram(user.token, { name: "Every tenth bar", code: tradingProgram })
          const { failures, page } = yield* openPage(yield* browser, origin)
          yield* logIn(page, origin, user)
          // Eleven months of minutes: far longer than the test.
          yield* fillMarket(page, "1m", "2024-06-01", "2025-05-01")
          yield* promise(async () => {
            await page.click("form.run button[type=submit]")
            await page.click("form.run button:text('Cancel backtest')", { timeout: 30_000 })
            await page.waitForSelector("section.backtest[data-status=cancelled]", { timeout: 30_000 })
          })
          const history = yield* call("GET", `/api/programs/backtest/history?program_id=${program.id}`, {
            token: user.token
          })
          expect(history.body.backtests).toHaveLength(1)
          expect(history.body.backtests[0].status).toBe("cancelled")
          expect(yield* promise(() => page.$$("form.run button:text('Cancel backtest')"))).toHaveLength(0)
          expect(failures).toEqual([])
        }).pipe(Effect.scoped),
      { timeout: 90_000 }
    )

    it.effect.skipIf(!withChromium)(
      "in Chromium: a walk-forward optimisation asked for from the form shows each fold's best parameters in and out of sample, and the out-of-sample equity chained",
      () =>
        Effect.gen(function*() {
          const origin = yield* baseUrl
          const user = yield* signUp("walkforward")
          const program = yield* createProgram(user.token, { name: "SMA", code: smaProgram })
          const { failures, page } = yield* openPage(yield* browser, origin)
          yield* logIn(page, origin, user)
          yield* promise(async () => {
            await page.fill("form.optimize input[name=opt_from]", "2025-01-01")
            await page.fill("form.optimize input[name=opt_to]", "2025-01-15")
            await page.check("form.optimize input[name=walk_forward]")
            await page.fill("form.optimize input[name=wf_folds]", "2")
            await page.fill("form.optimize input[name=wf_in_sample_bars]", "120")
            await page.fill("form.optimize input[name=wf_out_of_sample_bars]", "48")
            await page.click("form.optimize button[type=submit]")
            await page.waitForSelector("section.optimization[data-status=completed]", { timeout: 180_000 })
          })
          const list = (yield* call("GET", `/api/programs/${program.id}/optimizations`, { token: user.token })).body
          const optimization = list.optimizations[0]
          expect(optimization.request.walk_forward).toMatchObject({
            mode: "rolling",
            folds: 2,
            in_sample_bars: 120,
            out_of_sample_bars: 48
          })
          const folds = optimization.result.folds
          expect(folds).toHaveLength(2)
          const rows = yield* cells(page, "table.folds tbody tr")
          expect(rows.map((row) => [row[0], row[3], row[7]])).toEqual(
            folds.map((f: any) => [
              String(f.fold),
              f.best === null
                ? "none met the constraints"
                : Object.entries(f.best.params).map(([name, value]) => `${name} ${value}`).join(", "),
              f.out_of_sample_metrics === null ? "–" : shown(f.out_of_sample_metrics.total_pnl_percent)
            ])
          )
          expect(optimization.result.equity_curve.length).toBeGreaterThan(1)
          expect(yield* drawnChart(page, "section.walk-forward .chart", 1, blue)).toBeGreaterThan(50)
          expect(yield* promise(() => page.textContent("section.walk-forward .figures dd"))).toBe(
            `${shown(optimization.result.walk_forward.out_of_sample_return_percent)} %`
          )
          yield* promise(() => page.locator("section.walk-forward").scrollIntoViewIfNeeded())
          yield* shoot(page, "optimization-walk-forward")
          expect(failures).toEqual([])
        }).pipe(Effect.scoped),
      { timeout: 240_000 }
    )
  })
})
