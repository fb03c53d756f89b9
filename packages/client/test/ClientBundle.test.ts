import { describe, expect, it } from "@effect/vitest"
import { build } from "esbuild"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../..", import.meta.url))

/** The client as an application's bundler sees it: every module it pulls in, and the minified output. */
const bundle = () =>
  build({
    stdin: { contents: "export * from \"@trading-platform/client\"", resolveDir: root, loader: "js" },
    bundle: true,
    platform: "node",
    format: "esm",
    minify: true,
    write: false,
    metafile: true,
    conditions: ["@trading-platform/source"],
    logLevel: "silent"
  })

describe("the client's bundle", () => {
  it(
    "imports no @effect/platform barrel (a CommonJS require of it loads Scalar's 3.4 MB bundle) and no storage or server code",
    async () => {
      const { metafile } = await bundle()
      const barrelImporters = Object.entries(metafile.inputs)
        .filter(([, input]) => input.imports.some((i) => i.original === "@effect/platform"))
        .map(([file]) => file)
      expect(barrelImporters).toEqual([])
      const serverSide = Object.keys(metafile.inputs).filter((file) =>
        /HttpApiScalar|HttpApiSwagger|HttpApiBuilder|platform-node|@effect\/sql|packages\/server\//.test(file)
      )
      expect(serverSide).toEqual([])
    },
    60_000
  )

  it("bundles to under 800 KiB minified (680 KiB measured, mostly effect itself)", async () => {
    const { outputFiles } = await bundle()
    expect(outputFiles[0]!.contents.byteLength).toBeLessThan(800 * 1024)
  }, 60_000)
})
