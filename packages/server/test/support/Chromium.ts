import { Effect } from "effect"
import { existsSync } from "node:fs"
import { chromium } from "playwright-core"

const chromiumPath = "/usr/bin/chromium"

/** Whether the machine's Chromium is there; when not, says loudly which tests (`what`) are skipped. */
export const hasChromium = (what: string) => {
  const present = existsSync(chromiumPath)
  if (!present) console.warn(`${chromiumPath} is missing (apt-get install -y chromium): ${what} SKIPPED`)
  return present
}

/**
 * Headless Chromium, closed with the scope. The flags keep it off the network (this machine refuses
 * outside connections, and Chromium's background requests would fail by the dozen).
 */
export const browser = Effect.acquireRelease(
  Effect.promise(() =>
    chromium.launch({
      executablePath: chromiumPath,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync"
      ]
    })
  ),
  (b) => Effect.promise(() => b.close())
)
