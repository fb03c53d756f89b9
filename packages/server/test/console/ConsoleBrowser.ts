/** Driving the console in headless Chromium as a user would, and checking what it drew. */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { mkdirSync } from "node:fs"
import { fileURLToPath } from "node:url"
import type { Browser, Page } from "playwright-core"

/** Where the screenshots docs/console.md shows are written, when CONSOLE_SCREENSHOTS is set (they change with every run's data). */
const screenshots = process.env.CONSOLE_SCREENSHOTS
  ? fileURLToPath(new URL("../../../../docs/console/", import.meta.url))
  : undefined

/**
 * A page at 1440 px wide that records what would make a view fail: an uncaught error, a console
 * error (Chromium logs a CSP refusal as one), or a request to another origin.
 */
export const openPage = (b: Browser, origin: string) =>
  Effect.promise(async () => {
    const page = await b.newPage({ viewport: { width: 1440, height: 900 } })
    const failures: Array<string> = []
    page.on("pageerror", (error) => failures.push(error.message))
    // The browser's own request for /favicon.ico is the one 404 allowed.
    page.on("console", (message) => {
      if (message.type() === "error" && !message.location().url.endsWith("/favicon.ico")) {
        failures.push(`${message.text()} ${message.location().url}`)
      }
    })
    page.on("request", (request) => {
      if (!request.url().startsWith(`${origin}/`)) failures.push(`left the origin: ${request.url()}`)
    })
    return { page, failures }
  })

/** Logs in through the page's form, and waits for the views' navigation. */
export const logIn = (page: Page, origin: string, user: { email: string; password: string }, view = "") =>
  Effect.promise(async () => {
    await page.goto(`${origin}/console${view === "" ? "" : `#${view}`}`)
    await page.fill("input[name=email]", user.email)
    await page.fill("input[name=password]", user.password)
    await page.click("form button[type=submit]")
    await page.waitForSelector("header nav", { timeout: 30_000 })
  })

/** Goes to a view by its link in the navigation. */
export const goTo = (page: Page, view: string) => Effect.promise(() => page.click(`header nav a:text('${view}')`))

/**
 * Waits for the chart `selector` to have its series' data (`data-series-count`, set after they are
 * given to the library), expects `count` of them, and answers how many of its pixels have `colour`.
 */
export const drawnChart = (page: Page, selector: string, count: number, colour: string) =>
  Effect.promise(async () => {
    await page.waitForSelector(`${selector}[data-series-count]`, { timeout: 60_000 })
    expect(await page.getAttribute(selector, "data-series-count")).toBe(String(count))
    // The library paints on its next animation frame.
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))))
    return page.$eval(selector, (chart, hex) => {
      const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16))
      let near = 0
      for (const canvas of chart.querySelectorAll("canvas")) {
        if (canvas.width === 0 || canvas.height === 0) continue
        const { data } = canvas.getContext("2d")!.getImageData(0, 0, canvas.width, canvas.height)
        for (let i = 0; i < data.length; i += 4) {
          if (
            data[i + 3]! > 200 && Math.abs(data[i]! - r!) < 40 && Math.abs(data[i + 1]! - g!) < 40 &&
            Math.abs(data[i + 2]! - b!) < 40
          ) near++
        }
      }
      return near
    }, colour)
  })

/**
 * Screenshots of the view at 1440×900 and at 375×800 (into docs/console/ when asked), checking the
 * narrow page does not scroll sideways (wide tables scroll in their own box).
 */
export const shoot = (page: Page, name: string) =>
  Effect.promise(async () => {
    const settle = () =>
      page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))))
    const path = (width: number) => screenshots === undefined ? undefined : `${screenshots}${name}-${width}.png`
    if (screenshots !== undefined) mkdirSync(screenshots, { recursive: true })
    await settle()
    await page.screenshot({ ...(path(1440) === undefined ? {} : { path: path(1440)! }) })
    await page.setViewportSize({ width: 375, height: 800 })
    await settle()
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375)
    await page.screenshot({ ...(path(375) === undefined ? {} : { path: path(375)! }) })
    await page.setViewportSize({ width: 1440, height: 900 })
    await settle()
  })

/** The text of each cell of the table rows `selector` finds. */
export const cells = (page: Page, selector: string) =>
  Effect.promise(() =>
    page.$$eval(selector, (rows) => rows.map((row) => [...row.children].map((cell) => cell.textContent ?? "")))
  )

/**
 * Puts `code` in the program editor `within` (CodeMirror, once its chunk has loaded) in place of
 * what it holds, as a user pasting it would: select all with the keyboard, then a paste (typed
 * text would have the browser turn runs of spaces into non-breaking ones).
 */
export const fillCode = (page: Page, code: string, within = "form.editor") =>
  Effect.promise(async () => {
    const content = `${within} .code-editor[data-ready] .cm-content`
    await page.waitForSelector(content, { timeout: 30_000 })
    await page.click(content)
    await page.keyboard.press("ControlOrMeta+A")
    await page.$eval(content, (editor, text) => {
      const data = new DataTransfer()
      data.setData("text/plain", text)
      editor.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }))
    }, code)
  })

/** The text the program editor `within` holds, line by line as CodeMirror shows it. */
export const editorText = (page: Page, within = "form.editor") =>
  Effect.promise(async () => {
    await page.waitForSelector(`${within} .code-editor[data-ready] .cm-content`, { timeout: 30_000 })
    return page.$$eval(`${within} .cm-content .cm-line`, (lines) =>
      lines.map((line) => line.textContent ?? "").join("\n"))
  })
