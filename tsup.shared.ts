import { build } from "esbuild"
import { mkdir, readFile, writeFile } from "node:fs/promises"
import { dirname, join, relative } from "node:path"
import { defineConfig } from "tsup"

/** The export condition under which each workspace package names its TypeScript sources. */
const sourceCondition = "@trading-platform/source"

/**
 * The CommonJS build: one bundle, `dist/commonjs.cjs`, holding every module once, and per entry a
 * stub `dist/<entry>.cjs` that requires it. Separate CommonJS bundles per entry would each carry
 * their own copy of the modules they share (two `TradingApi` classes, two error catalogues), and
 * tsup's CommonJS code splitting is experimental and emitted broken code. The bundle makes each
 * entry a getter over esbuild's lazily initialised modules, so an entry loads only what it
 * imports: `@trading-platform/core/contract` still loads no storage.
 */
const buildCommonJs = async (entry: Record<string, string>) => {
  const { dependencies = {}, peerDependencies = {} } = JSON.parse(await readFile("package.json", "utf8"))
  const getters = Object.entries(entry)
    .map(([name, source]) => `get ${JSON.stringify(name)}() { return require(${JSON.stringify(`./${source}`)}) }`)
  await build({
    stdin: { contents: `module.exports = { ${getters.join(", ")} }`, resolveDir: ".", sourcefile: "commonjs.cjs" },
    outfile: "dist/commonjs.cjs",
    bundle: true,
    format: "cjs",
    platform: "node",
    target: "node20",
    sourcemap: true,
    external: [...Object.keys(dependencies), ...Object.keys(peerDependencies)],
    // A workspace package bundled into this one (see `packageBuild`) is read from its sources.
    conditions: [sourceCondition],
    // import.meta is empty in CommonJS; the modules that use it check for __filename first.
    logOverride: { "empty-import-meta": "silent" },
    logLevel: "warning"
  })
  for (const name of Object.keys(entry)) {
    const stub = join("dist", `${name}.cjs`)
    const bundle = relative(dirname(stub), "dist/commonjs.cjs")
    await mkdir(dirname(stub), { recursive: true })
    const path = JSON.stringify(bundle.startsWith(".") ? bundle : `./${bundle}`)
    await writeFile(stub, `"use strict"\nmodule.exports = require(${path})[${JSON.stringify(name)}]\n`)
  }
}

/**
 * How every package builds: ESM (tsup, code split) with declarations, and CommonJS (see
 * `buildCommonJs`); dependencies and peer dependencies stay external. A workspace module named in
 * `inline` (its specifier, from a dev dependency, and its source file) is bundled from its sources,
 * code and declarations, so the published package does not need it installed. `onSuccess` runs
 * after both builds.
 */
export const packageBuild = (
  entry: Record<string, string>,
  { inline = {}, onSuccess }: {
    readonly inline?: Record<string, string>
    readonly onSuccess?: () => Promise<void>
  } = {}
) =>
  defineConfig({
    entry,
    format: ["esm"],
    // Declarations follow a package import into node_modules only when a path maps it to a source.
    dts: {
      compilerOptions: { paths: Object.fromEntries(Object.entries(inline).map(([name, file]) => [name, [file]])) }
    },
    esbuildOptions: (options) => {
      options.conditions = [sourceCondition]
    },
    clean: true,
    sourcemap: true,
    target: "node20",
    onSuccess: async () => {
      await buildCommonJs(entry)
      await onSuccess?.()
    }
  })
