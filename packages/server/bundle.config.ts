/**
 * The server as an application: `main.js` (the server), `cli.js` (the `trading-platform` command)
 * and the worker threads' entries, bundled by esbuild with their dependencies, tree-shaken and
 * code-split, so a start reads a few files instead of resolving and evaluating thousands of
 * modules. The package build writes it into `dist/` (beside the library entries, which keep their
 * dependencies external for embedders); `npm start` writes it into a cache (`scripts/start.mjs`).
 */
import { build, type Metafile, type Plugin } from "esbuild"
import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { requireBanner, selfLocatingPackages } from "../core/src/jobs/WorkerThread.js"
import { writeConsole } from "./src/console/ConsoleBuild.js"

const source = (path: string) => fileURLToPath(new URL(`src/${path}`, import.meta.url))
const coreSource = (path: string) => fileURLToPath(new URL(`../core/src/${path}`, import.meta.url))

/**
 * Left to Node's resolution: packages that find their own files next to their modules (PGlite's
 * and QuickJS's WebAssembly and data files), native or optional modules, and the build tools that
 * only the sources load (esbuild, for the console and for threads started from `.ts`).
 */
export const externalPackages = [...selfLocatingPackages, "pg-native", "esbuild"]

/**
 * `@effect/platform`'s index re-exports `HttpApiScalar`, and esbuild's code splitting then puts the
 * module's 3 MB inlined script in the chunk every entry loads, although only the `/docs` page
 * imports it, on its first request (`docs/DocsPage.ts`, from the module's own path). The bundle's
 * copy of the index leaves that re-export out; a use of it through the index fails the build.
 */
const scalarOnDemand: Plugin = {
  name: "scalar-on-demand",
  setup(build) {
    build.onLoad({ filter: /[\\/]@effect[\\/]platform[\\/]dist[\\/]esm[\\/]index\.js$/ }, async (args) => ({
      contents: (await readFile(args.path, "utf8")).replace(/^export \* as HttpApiScalar from .*$/m, ""),
      loader: "js"
    }))
  }
}

/**
 * Bundles the application into `outdir`, with the web console's files. Worker threads are found beside the module that starts
 * them at the path their entry has under `src/` (see core's `jobs/WorkerThread.ts`), and the
 * console's files in `console/` beside it (see `console/ConsolePage.ts`), so entries and shared
 * chunks all sit at the root of `outdir`.
 */
export const bundleServer = async (outdir: string): Promise<Metafile> => {
  const { metafile } = await build({
    entryPoints: {
      main: source("main.ts"),
      cli: source("cli/Main.ts"),
      "backtests/BacktestThreadEntry": coreSource("backtests/BacktestThreadEntry.ts"),
      "automation/LiveDecisionEntry": coreSource("automation/LiveDecisionEntry.ts"),
      "sandbox/CheckThreadEntry": coreSource("sandbox/CheckThreadEntry.ts"),
      "research/TrialThreadEntry": coreSource("research/TrialThreadEntry.ts")
    },
    outdir,
    chunkNames: "app-[hash]",
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    sourcemap: true,
    metafile: true,
    // Our packages from their sources, as `npm start` runs them.
    conditions: ["@trading-platform/source"],
    external: externalPackages,
    plugins: [scalarOnDemand],
    banner: { js: requireBanner },
    logLevel: "warning"
  })
  await writeConsole(join(outdir, "console"))
  return metafile
}
