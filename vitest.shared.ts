import { defineConfig } from "vitest/config"

// Tests run the TypeScript sources of the workspace packages through the package.json
// "@trading-platform/source" export condition, so no build is needed before `npm test`.
export default defineConfig({
  resolve: { conditions: ["@trading-platform/source"] },
  ssr: { resolve: { conditions: ["@trading-platform/source"] } },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000
  }
})
