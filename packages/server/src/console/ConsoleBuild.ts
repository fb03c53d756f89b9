/**
 * Builds the console's browser code (`app/`, Preact components and TradingView's lightweight-charts)
 * with the typed client bundled in. The package build writes the result to `dist/console/`; a server
 * running from the sources builds it when the page is first asked for (see `ConsolePage.ts`), so
 * `npm start` on a fresh clone needs no build step.
 */
import { build, type Metafile, type Plugin } from "esbuild"
import { mkdir, readFile, writeFile } from "node:fs/promises"
import { basename, join } from "node:path"
import { fileURLToPath } from "node:url"
import { gzipSync } from "node:zlib"

/**
 * The libraries the page loads on demand, each from a chunk of its own that the app's budget leaves
 * out: what their chunk is made of (the editor's includes the app's module that sets it up).
 */
const libraries = {
  charts: /node_modules[\\/](lightweight-charts|fancy-canvas)[\\/]/,
  editor: /node_modules[\\/](@codemirror|@lezer|@marijn|style-mod|w3c-keyname|crelt)[\\/]|app[\\/]CodeMirrorSetup\.ts$/
} as const

/** A library loaded on demand. */
export type ConsoleLibrary = keyof typeof libraries

/** Gzip bytes of the page's files: the page itself (`app`), and each library's chunk apart, as its budget leaves them out. */
export type ConsoleSizes = { readonly app: number } & { readonly [L in ConsoleLibrary]: number }

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

/** The budgets of `docs/console.md`, gzipped: the page without the libraries, and the editor's chunk. */
export const appBudget = 250 * 1024
export const editorBudget = 140 * 1024

/** The library an output is the chunk of: every one of its inputs is that library's (the page imports it on demand). */
const libraryOf = (output: Metafile["outputs"][string]): ConsoleLibrary | undefined => {
  const inputs = Object.keys(output.inputs)
  return inputs.length === 0
    ? undefined
    : (Object.keys(libraries) as Array<ConsoleLibrary>).find((library) =>
      inputs.every((input) => libraries[library].test(input))
    )
}

/**
 * Effect's `Schema` imports fast-check (about 12 KB gzip) for the arbitraries it can derive, which
 * the page never asks for: the page gets a stand-in that says so if it ever were.
 */
const withoutFastCheck: Plugin = {
  name: "without-fast-check",
  setup: (build) => {
    build.onResolve({ filter: /^fast-check$/ }, () => ({ path: "fast-check", namespace: "stand-in" }))
    build.onLoad({ filter: /.*/, namespace: "stand-in" }, () => ({
      contents: "export const array = () => { throw new Error(\"fast-check is left out of the console\") }",
      loader: "js"
    }))
  }
}

/**
 * CodeMirror's styles go into the page through style-mod, which gives a document a `<style>`
 * element; the page's policy (`style-src 'self'`) refuses that, so the editor would show unstyled.
 * It gives a shadow root a constructed stylesheet instead (`adoptedStyleSheets`), which the policy
 * allows: the page's style-mod does that for the document too.
 */
const styleModAdopted: Plugin = {
  name: "style-mod-adopted",
  setup: (build) => {
    build.onLoad({ filter: /[\\/]style-mod[\\/]src[\\/]style-mod\.js$/ }, async ({ path }) => {
      const source = await readFile(path, "utf8")
      const test = "if (!root.head && root.adoptedStyleSheets && win.CSSStyleSheet)"
      if (!source.includes(test)) throw new Error(`style-mod has changed: ${path} no longer says ${test}`)
      return { contents: source.replace(test, "if (root.adoptedStyleSheets && win.CSSStyleSheet)"), loader: "js" }
    })
  }
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
    plugins: [withoutFastCheck, styleModAdopted],
    logLevel: "silent"
  })
  const files: Record<string, string> = {}
  const sizes = { app: 0, charts: 0, editor: 0 }
  for (const output of outputFiles) {
    const name = basename(output.path)
    files[name] = output.text
    const meta = Object.entries(metafile.outputs).find(([path]) => basename(path) === name)![1]
    sizes[libraryOf(meta) ?? "app"] += gzipSync(output.contents).length
  }
  const entry = Object.entries(metafile.outputs).find(([, output]) => output.entryPoint !== undefined)!
  return { script: basename(entry[0]), style: basename(entry[1].cssBundle!), files, sizes }
}

/** The sizes as the build prints them. */
export const describeSizes = ({ app, charts, editor }: ConsoleSizes) => {
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB gzip`
  return `console: ${kb(app)} without the chart library and the editor (budget ${appBudget / 1024} KB), ` +
    `chart library ${kb(charts)}, editor ${kb(editor)} (budget ${editorBudget / 1024} KB)`
}

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
