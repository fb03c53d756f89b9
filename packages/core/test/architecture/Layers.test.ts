import { describe, expect, it } from "@effect/vitest"
import { cruise, type ICruiseResult } from "dependency-cruiser"
import extractDepcruiseOptions from "dependency-cruiser/config-utl/extract-depcruise-options"
import extractTSConfig from "dependency-cruiser/config-utl/extract-ts-config"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../../../", import.meta.url))

/** The rules of `.dependency-cruiser.cjs` (no cycles, the layer order, features' repositories) over both packages. */
const violations = async () => {
  const options = await extractDepcruiseOptions(`${root}.dependency-cruiser.cjs`)
  const { output } = await cruise(
    ["packages/core/src", "packages/server/src"],
    { ...options, baseDir: root },
    {},
    { tsConfig: extractTSConfig(`${root}tsconfig.base.json`) }
  )
  const { summary } = output as ICruiseResult
  return {
    modules: summary.totalCruised,
    violations: summary.violations.map(({ from, rule, to }) => `${rule.name}: ${from} -> ${to}`)
  }
}

describe("the modules of core and server", () => {
  it("import each other without cycles, down the layer order, and no other feature's repository", async () => {
    const result = await violations()
    expect(result.modules).toBeGreaterThan(200)
    expect(result.violations).toEqual([])
  }, 60_000)
})
