import { describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"

const root = fileURLToPath(new URL("../../../../", import.meta.url))
const packages = ["core", "server", "client"]

const run = async (command: string, args: Array<string>, cwd: string) =>
  (await promisify(execFile)(command, args, { cwd, env: { ...process.env, DATA_DIR: "memory://" }, timeout: 480_000 }))
    .stdout

// Loads every entry point, serves the platform from the packed server and calls it with the packed
// client, runs a backtest (in a thread started from the build) and a paper run (its decision thread
// too), checking the rulebook's terms and fills; the same code runs as ESM (import) and as CommonJS
// (require).
const check = `(async () => {
  const client = await load("@trading-platform/client")
  const contract = await load("@trading-platform/core/contract")
  const core = await load("@trading-platform/core")
  const server = await load("@trading-platform/server")
  const docs = await load("@trading-platform/server/docs")
  const { createServer } = await load("node:http")
  const platform = await server.makeNodeHandler({ console: true })
  const host = createServer(platform.handler)
  await new Promise((listening) => host.listen(0, "127.0.0.1", listening))
  const api = client.createClient({ baseUrl: "http://127.0.0.1:" + host.address().port })
  const health = await api.health()
  // The console's files, built into dist/console/ by the package build.
  const consoleScript = await fetch("http://127.0.0.1:" + host.address().port + "/console/app.js")
  const refused = await api.users.me().catch((error) => error)
  // A backtest runs in a worker thread loaded from the installed build (BacktestThreadEntry).
  const base = "http://127.0.0.1:" + host.address().port
  // Polls may pass the read limit on a loaded machine: a 429 is waited out for its Retry-After, as a client does.
  const send = async (method, path, token, body) => {
    for (;;) {
      const reply = await fetch(base + path, {
        method,
        headers: { "content-type": "application/json", ...(token ? { authorization: "Bearer " + token } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {})
      })
      if (reply.status !== 429) return reply.json()
      await new Promise((resolve) => setTimeout(resolve, Number(reply.headers.get("retry-after")) * 1000))
    }
  }
  const user = { email: "pack@example.com", username: "packcheck", password: "correct horse battery" }
  await send("POST", "/api/users/register", undefined, user)
  const { session_token: token } = await send("POST", "/api/users/login", undefined, { email: user.email, password: user.password })
  const program = await send("POST", "/api/programs", token, { name: "Always long", code: "export function decide() { return { operation: 'buy' } }" })
  // Two symbols from one balance, and a longer timeframe built in the sandbox.
  let backtest = await send("POST", "/api/programs/" + program.id + "/backtest", token, { symbols: ["BTC", "ETH"], timeframes: ["4h"], timeframe: "1h", start: "2025-01-01T00:00:00Z", end: "2025-01-15T00:00:00Z" })
  for (let deadline = Date.now() + 60000; ["queued", "running"].includes(backtest.status) && Date.now() < deadline;) {
    await new Promise((resolve) => setTimeout(resolve, 200))
    backtest = await send("GET", "/api/programs/backtest/" + backtest.id, token)
  }
  // A candle file streams into a dataset (a CSV, then a zip read with the installed fflate), and a
  // backtest runs on it.
  const hourly = (from, count) => Array.from({ length: count }, (_, i) =>
    (Date.parse(from) + i * 3600000) + ",100,101,99,100.5," + (i + 1)).join("\\n")
  const importTo = (body, type) => fetch(base + "/api/market/candles/import?name=pack&symbol=BTC&timeframe=1h", {
    method: "POST",
    headers: { "content-type": type, authorization: "Bearer " + token },
    body
  }).then((reply) => reply.json())
  const csv = await importTo(hourly("2025-01-01T00:00:00Z", 24), "text/csv")
  const { zipSync } = await load("fflate")
  const zipped = await importTo(zipSync({ "day2.csv": new TextEncoder().encode(hourly("2025-01-02T00:00:00Z", 24)) }), "application/zip")
  let onDataset = await send("POST", "/api/programs/" + program.id + "/backtest", token, { symbol: "BTC", exchange: "dataset:pack", timeframe: "1h", start: "2025-01-01T00:00:00Z", end: "2025-01-03T00:00:00Z" })
  for (let deadline = Date.now() + 60000; ["queued", "running"].includes(onDataset.status) && Date.now() < deadline;) {
    await new Promise((resolve) => setTimeout(resolve, 200))
    onDataset = await send("GET", "/api/programs/backtest/" + onDataset.id, token)
  }
  // A paper account runs the program once (a decision thread loaded from the build) and fills by the rulebook.
  const account = await send("POST", "/api/account", token, { name: "pack" })
  const binding = await send("POST", "/api/programs/" + program.id + "/bindings", token, { account_id: account.id, symbols: ["BTC"], interval_minutes: 1440 })
  await send("POST", "/api/programs/" + program.id + "/bindings/" + binding.id + "/run", token)
  let runs = []
  for (let deadline = Date.now() + 60000; Date.now() < deadline;) {
    const listed = await send("GET", "/api/programs/" + program.id + "/bindings/" + binding.id + "/runs", token)
    if (!Array.isArray(listed.runs)) throw new Error("runs: " + JSON.stringify({ account, binding, listed }))
    runs = listed.runs
    if (runs.length > 0 && runs.every((run) => ["completed", "failed"].includes(run.status))) break
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  const orders = (await send("GET", "/api/account/" + account.id + "/orders", token)).orders
  const funding = await send("GET", "/api/account/" + account.id + "/funding", token)
  host.close()
  await platform.dispose()
  console.log(JSON.stringify({
    clientExports: Object.keys(client).sort(),
    contract: typeof contract.TradingApi,
    core: typeof core.PlatformLive,
    docs: typeof docs.DocsPageLive,
    openApiVersion: server.openApiDocument().info.version,
    health: { status: health.status, version: health.version },
    console: { status: consoleScript.status, bytes: (await consoleScript.text()).length > 1000 },
    refused: { name: refused.name, status: refused.status, code: refused.code },
    backtest: { status: backtest.status, error: backtest.error, points: backtest.equity_curve.length, symbols: backtest.per_symbol.map((m) => m.symbol) },
    rulebook: { fill_timing: backtest.fill_timing, fills: backtest.fills.length > 0, funding: typeof backtest.metrics.total_funding },
    paper: { runs: runs.map((run) => run.status), orders: orders.map((order) => order.status), funding: Array.isArray(funding.funding) },
    imports: [csv.imported, zipped.imported, zipped.dataset.bars],
    onDataset: { status: onDataset.status, error: onDataset.error, points: onDataset.equity_curve.length }
  }))
})()`

/** Every package `name` needs when installed, with the folder it is installed in (hoisted npm layout). */
const dependencyTree = (modules: string, name: string, found = new Map<string, string>()) => {
  const dir = join(modules, name)
  if (found.has(name) || !existsSync(dir)) return found
  found.set(name, dir)
  const { dependencies = {}, optionalDependencies = {}, peerDependencies = {} } = JSON.parse(
    readFileSync(join(dir, "package.json"), "utf8")
  )
  // npm installs peer dependencies too; optional ones (and other platforms' binaries) only when present.
  for (const dependency of Object.keys({ ...dependencies, ...optionalDependencies, ...peerDependencies })) {
    dependencyTree(modules, dependency, found)
  }
  return found
}

const sizeOf = (path: string): number => {
  const stat = statSync(path)
  return stat.isDirectory() ? readdirSync(path).reduce((sum, entry) => sum + sizeOf(join(path, entry)), 0) : stat.size
}

const isEffect = (name: string) => name === "effect" || name.startsWith("@effect/")

/** A package's installed footprint: all of it, and what it adds beyond Effect (its peers and their own dependencies). */
const footprint = (modules: string, name: string) => {
  const tree = dependencyTree(modules, name)
  const effect = new Set<string>()
  for (const peer of [...tree.keys()].filter(isEffect)) {
    for (const dep of dependencyTree(modules, peer).keys()) effect.add(dep)
  }
  const own = [...tree].filter(([dep]) => !effect.has(dep) || dep === name)
  const measure = (entries: Array<[string, string]>) => ({
    packages: entries.length,
    mebibytes: Number((entries.reduce((sum, [, dir]) => sum + sizeOf(dir), 0) / 2 ** 20).toFixed(1))
  })
  return { all: measure([...tree]), beyondEffect: measure(own) }
}

/** The source modules in each CommonJS file's source map, by file. */
const commonJsSources = (dir: string) =>
  readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".cjs"))
    .map((file) => {
      const map = join(dir, `${file}.map`)
      const sources: Array<string> = existsSync(map) ? JSON.parse(readFileSync(map, "utf8")).sources : []
      return { file, sources: sources.filter((source) => !source.includes("node_modules")) }
    })

/** A copy of the repository's sources to build in, so a test run never rewrites the working tree's `dist/`. */
const scratchCopy = () => {
  const work = mkdtempSync(join(tmpdir(), "trading-build-"))
  cpSync(root, work, {
    recursive: true,
    filter: (source) => !/(^|\/)(node_modules|dist|\.git)$/.test(source.slice(root.length))
  })
  symlinkSync(join(root, "node_modules"), join(work, "node_modules"))
  return work
}

/**
 * Installs tarballs into a new empty project, offline where npm's cache has the packages, without
 * install scripts: they would build the optional `isolated-vm` addon from source in every project
 * (minutes each on a loaded machine; the repository's own install builds and tests it), and the
 * checks run node without `--no-node-snapshot`, so programs run in QuickJS there either way.
 */
const installInto = async (project: string, tarballs: ReadonlyArray<string>) => {
  await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--ignore-scripts", ...tarballs], project)
}

const emptyProject = (prefix: string) => {
  const project = mkdtempSync(join(tmpdir(), prefix))
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "pack-check", private: true, type: "module" }))
  return project
}

// The client's types, read by the TypeScript compiler as an application does: the contract's are
// bundled in (an unresolved import would make \`User\` any, and the expected error would not come).
const typeCheck = `import { createClient } from "@trading-platform/client"
import { User } from "@trading-platform/client/contract"
const api = createClient({ baseUrl: "http://127.0.0.1:1" })
export const me: Promise<User> = api.users.me()
// @ts-expect-error an email is text
export const wrong: Promise<number> = api.users.me().then((user) => user.email)
`

describe("the published packages", () => {
  it("build in a scratch copy, pack, install alone into an empty project and work as ESM and as CommonJS", async () => {
    const work = scratchCopy()
    // Each package builds from the sources alone (core's types and the client's bundled contract too), so all at once.
    await Promise.all(packages.map((name) => run("npm", ["run", "build"], join(work, "packages", name))))
    // Each module is in one CommonJS file only: the entries are stubs requiring one bundle.
    for (const name of packages) {
      const files = commonJsSources(join(work, "packages", name, "dist"))
      const sources = files.flatMap((f) => f.sources)
      expect(sources.filter((source, i) => sources.indexOf(source) !== i), name).toEqual([])
      expect(files.filter((f) => f.sources.length > 0).map((f) => f.file), name).toEqual(["commonjs.cjs"])
    }
    const tarballs: Record<string, string> = {}
    const packs = mkdtempSync(join(tmpdir(), "trading-pack-"))
    for (const name of packages) {
      const dir = join(work, "packages", name)
      const [packed] = JSON.parse(await run("npm", ["pack", "--json", "--pack-destination", packs], dir))
      tarballs[name] = join(packs, packed.filename)
      // Every file the exports map points at (except the source condition) is in the tarball.
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"))
      const targets = Object.values<Record<string, string>>(manifest.exports).flatMap((conditions) =>
        Object.entries(conditions)
          .filter(([condition]) => condition !== "@trading-platform/source")
          .map(([, path]) => path.replace(/^\.\//, ""))
      )
      expect(packed.files.map((file: { path: string }) => file.path)).toEqual(expect.arrayContaining(targets))
      // Effect comes from the application, once: a peer on the 3.x line, never a dependency of ours.
      expect(Object.keys(manifest.dependencies ?? {}).filter(isEffect), name).toEqual([])
      expect(manifest.peerDependencies.effect, name).toMatch(/^\^3\./)
    }
    rmSync(work, { recursive: true })

    // Each package alone (the server with core, its one workspace dependency), as an application installs it.
    const footprints: Record<string, ReturnType<typeof footprint>> = {}
    const alone = { client: ["client"], core: ["core"], server: ["core", "server"] }
    const projects: Record<string, string> = {}
    // Into projects of their own at once: npm's cache takes concurrent installs.
    await Promise.all(
      Object.entries(alone).map(async ([name, names]) => {
        const project = emptyProject(`trading-${name}-`)
        await installInto(project, names.map((n) => tarballs[n]!))
        footprints[name] = footprint(join(project, "node_modules"), `@trading-platform/${name}`)
        // One copy of effect whatever the packages: no package brings its own.
        const nested = readdirSync(join(project, "node_modules"), { recursive: true, encoding: "utf8" })
          .filter((path) => /node_modules\/effect$/.test(path))
        expect(nested, name).toEqual([])
        projects[name] = project
      })
    )
    console.log(`installed alone from its tarball: ${JSON.stringify(footprints)}`)
    // The client with Effect is mostly Effect itself (effect 27 MiB, @effect/platform 19 MiB unpacked).
    expect(footprints.client!.all.packages).toBeLessThanOrEqual(20)
    expect(footprints.client!.beyondEffect.mebibytes).toBeLessThanOrEqual(10)
    expect(footprints.client!.beyondEffect.packages).toBe(1)
    const clientProject = projects.client!
    writeFileSync(join(clientProject, "check.ts"), typeCheck)
    writeFileSync(
      join(clientProject, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { module: "NodeNext", strict: true, noEmit: true, lib: ["ES2022", "DOM"] } })
    )
    await run(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", "."], clientProject)
    const loads = `import { createClient } from "@trading-platform/client"
      import { User } from "@trading-platform/client/contract"
      console.log(typeof createClient({ baseUrl: "http://127.0.0.1:1" }).users.me, typeof User)`
    expect((await run(process.execPath, ["--input-type=module", "--eval", loads], clientProject)).trim())
      .toBe("function function")

    // Everything together: the server's project with the client added.
    const project = projects.server!
    await installInto(project, [tarballs.client!])
    writeFileSync(join(project, "check.mjs"), `const load = (name) => import(name);\n${check}`)
    writeFileSync(join(project, "check.cjs"), `const load = async (name) => require(name);\n${check}`)
    const expected = {
      clientExports: [
        "LiveStreamError",
        "RequestInputError",
        "TradingApiError",
        "assistantChat",
        "createClient",
        "makeClient",
        "marketIntelligence",
        "retrySchedule",
        "subscribe",
        "withRetry"
      ],
      contract: "function",
      core: "object",
      docs: "object",
      openApiVersion: "0.1.0",
      health: { status: "ok", version: "0.1.0" },
      console: { status: 200, bytes: true },
      refused: { name: "TradingApiError", status: 401, code: "unauthorized" },
      backtest: { status: "completed", error: null, points: 336, symbols: ["BTC", "ETH"] },
      rulebook: { fill_timing: "next_open", fills: true, funding: "number" },
      paper: { runs: ["completed"], orders: ["filled"], funding: true },
      imports: [24, 24, 48],
      onDataset: { status: "completed", error: null, points: 48 }
    }
    // Two processes, each with its own in-memory database: run side by side.
    const [asModule, asCommonJs] = await Promise.all(
      ["check.mjs", "check.cjs"].map((file) => run("node", [file], project))
    )
    expect(JSON.parse(asModule!)).toEqual(expected)
    expect(JSON.parse(asCommonJs!)).toEqual(expected)
    expect(await run(join(project, "node_modules/.bin/trading-platform"), ["--help"], project)).toMatch(/^Usage: /)

    for (const dir of [packs, ...Object.values(projects)]) rmSync(dir, { recursive: true })
  }, 900_000)
})
