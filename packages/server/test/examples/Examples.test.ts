import { describe, expect, layer } from "@effect/vitest"
import { testStorages } from "@trading-platform/core/testing"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { BacktestServer } from "../support/Backtests.js"
import { baseUrl } from "../support/TestServer.js"

const examplesDir = fileURLToPath(new URL("../../../../examples/", import.meta.url))

/** What each example must print; the client examples talk to the test server. */
const expectedOutput: Record<string, ReadonlyArray<RegExp>> = {
  "embed-node-http": [
    /GET \/api\/health -> 200 \{"status":"ok"/,
    /GET \/api\/nothing-here -> 404 not_found/,
    /GET \/ -> 200 Hello from the host/
  ],
  "embed-express": [
    /POST \/trading\/api\/users\/register -> 201 express_/,
    /GET \/trading\/api\/users\/me without a token -> 401 unauthorized/,
    /POST \/echo -> 200 \{"host":"express","received":\{"hello":"host"\}\}/
  ],
  "effect-client": [
    /health: ok, version \d+\.\d+\.\d+, storage pglite/,
    /signed in as effect_\w+ \(id \d+\)/,
    /users\.me without a token: Unauthorized \(token_missing\)/
  ],
  "live-streams": [
    /snapshot: BTC \d[\d.]*, ETH \d[\d.]*, 0 recent trigger\(s\)/,
    /backtest:\d+: (queued|running|completed) \d+%/
  ],
  "first-backtest": [
    /backtest \d+: (queued|running) \d+%/,
    /completed: \d+ trades, pnl -?[\d.]+ \(-?[\d.]+%\), win rate \d+%, max drawdown [\d.]+%, sharpe -?[\d.]+/
  ],
  "promise-client": [
    /health: ok after 2 requests \(the first answered 503\)/,
    /signed in as promise_\w+ with 1 session\(s\)/,
    /users\.me without a token: 401 unauthorized "A session token is required" \(request [\w-]+\)/
  ]
}

/** `npm start` in an example with EXAMPLE_EXIT=1 and in-memory storage; fails unless it exits 0. */
const start = (example: string, env: Record<string, string> = {}) =>
  Effect.promise(() =>
    promisify(execFile)("npm", ["start", "--silent"], {
      cwd: examplesDir + example,
      env: { ...process.env, EXAMPLE_EXIT: "1", DATA_DIR: "memory://", ...env },
      timeout: 90_000
    })
  ).pipe(Effect.map(({ stdout }) => stdout))

describe("examples", () => {
  // With backtest workers and closed candles, for first-backtest.
  layer(BacktestServer(testStorages[0]!), { timeout: "120 seconds" })((it) => {
    it("every example has a start script and is run here", () => {
      const examples = readdirSync(examplesDir).sort()
      expect(examples).toEqual(Object.keys(expectedOutput).sort())
      for (const example of examples) {
        const manifest = JSON.parse(readFileSync(`${examplesDir}${example}/package.json`, "utf8"))
        expect(manifest.scripts.start, example).toMatch(/src\/main\.ts/)
      }
    })

    for (const [example, lines] of Object.entries(expectedOutput)) {
      it.effect(`${example}: npm start runs its demo and exits 0`, () =>
        Effect.gen(function*() {
          const stdout = yield* start(example, { TRADING_API_URL: yield* baseUrl })
          for (const line of lines) expect(stdout).toMatch(line)
        }), 120_000)
    }
  })
})
