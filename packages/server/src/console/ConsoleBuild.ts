/**
 * Builds the console's browser code (`app/`) with the typed client bundled in. The package build
 * writes the result to `dist/console/`; a server running from the sources builds it when the page
 * is first asked for (see `ConsolePage.ts`), so `npm start` on a fresh clone needs no build step.
 */
import { build } from "esbuild"
import { mkdir, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

/** The files the page loads, by name under `/console/`. */
export interface ConsoleAssets {
  readonly "app.js": string
  readonly "app.css": string
}

export const buildConsole = async (): Promise<ConsoleAssets> => {
  const { outputFiles } = await build({
    entryPoints: [fileURLToPath(new URL("app/main.ts", import.meta.url))],
    outdir: "out",
    entryNames: "app",
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser",
    target: "es2022",
    minify: true,
    // The client and core's contract from their sources: the same code the package build ships.
    conditions: ["@trading-platform/source"],
    logLevel: "silent"
  })
  const file = (extension: string) => outputFiles.find((output) => output.path.endsWith(extension))!.text
  return { "app.js": file(".js"), "app.css": file(".css") }
}

/** Writes the built files into `dir` (the package build's `dist/console/`). */
export const writeConsole = async (dir: string) => {
  const assets = await buildConsole()
  await mkdir(dir, { recursive: true })
  for (const [name, text] of Object.entries(assets)) await writeFile(join(dir, name), text)
}
