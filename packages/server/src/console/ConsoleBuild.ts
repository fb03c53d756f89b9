/**
 * Builds the console's browser code (`app/`, Preact components and TradingView's lightweight-charts)
 * with the typed client bundled in. The package build writes the result to `dist/console/`; a server
 * running from the sources builds it when the page is first asked for (see `ConsolePage.ts`), so
 * `npm start` on a fresh clone needs no build step.
 */
import { build, type Metafile } from "esbuild"
import { mkdir, writeFile } from "node:fs/promises"
import { basename, join } from "node:path"
import { fileURLToPath } from "node:url"
import { gzipSync } from "node:zlib"

/** Gzip bytes of the page's files: the chart library's chunk apart, as its budget leaves it out. */
export interface ConsoleSizes {
  readonly app: number
  readonly charts: number
}

/**
 * What the page loads: every file by its content-hashed name (so each can be cached for good), the
 * entry script and stylesheet among them, and their sizes.
 */
export interface ConsoleAssets {
  readonly script: string
  readonly style: string
  readonly files: Readonly<Record<string, string>>
  readonly sizes: ConsoleSizes
}

/** The budget of `docs/console.md`: the page without the chart library, gzipped. */
export const appBudget = 250 * 1024

const chartLibrary = /node_modules[\\/](lightweight-charts|fancy-canvas)[\\/]/

/** An output whose every input is the chart library's is its chunk (the page imports it on demand). */
const isChartChunk = (output: Metafile["outputs"][string]) => {
  const inputs = Object.keys(output.inputs)
  return inputs.length > 0 && inputs.every((input) => chartLibrary.test(input))
}

export const buildConsole = async (): Promise<ConsoleAssets> => {
  const { metafile, outputFiles } = await build({
    entryPoints: [fileURLToPath(new URL("app/main.tsx", import.meta.url))],
    outdir: "out",
    entryNames: "app-[hash]",
    chunkNames: "chunk-[hash]",
    bundle: true,
    splitting: true,
    write: false,
    metafile: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    minify: true,
    jsx: "automatic",
    jsxImportSource: "preact",
    // The client and core's contract from their sources: the same code the package build ships.
    conditions: ["@trading-platform/source"],
    logLevel: "silent"
  })
  const files: Record<string, string> = {}
  const sizes = { app: 0, charts: 0 }
  for (const output of outputFiles) {
    const name = basename(output.path)
    files[name] = output.text
    const meta = Object.entries(metafile.outputs).find(([path]) => basename(path) === name)![1]
    sizes[isChartChunk(meta) ? "charts" : "app"] += gzipSync(output.contents).length
  }
  const entry = Object.entries(metafile.outputs).find(([, output]) => output.entryPoint !== undefined)!
  return { script: basename(entry[0]), style: basename(entry[1].cssBundle!), files, sizes }
}

/** The sizes as the build prints them. */
export const describeSizes = ({ app, charts }: ConsoleSizes) =>
  `console: ${(app / 1024).toFixed(1)} KB gzip without the chart library (budget ${appBudget / 1024} KB), ` +
  `chart library ${(charts / 1024).toFixed(1)} KB gzip`

/**
 * Writes the built files into `dir` (the package build's `dist/console/`), with `manifest.json`
 * naming the entry script and stylesheet for the page.
 */
export const writeConsole = async (dir: string) => {
  const { files, ...manifest } = await buildConsole()
  await mkdir(dir, { recursive: true })
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text)
  await writeFile(join(dir, "manifest.json"), JSON.stringify({ ...manifest, files: Object.keys(files) }))
}
