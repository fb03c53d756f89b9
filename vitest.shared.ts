import { defineConfig } from "vitest/config"

// Tests run the TypeScript sources of the workspace packages through the package.json
// "@trading-platform/source" export condition, so no build is needed before `npm test`.
export default defineConfig({
  resolve: { conditions: ["@trading-platform/source"] },
  ssr: { resolve: { conditions: ["@trading-platform/source"] } },
  test: {
    include: ["test/**/*.test.ts"],
    // Timeouts catch a hang, not slowness: generous, so a loaded machine does not fail a test.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // isolated-vm (the V8 program runtime) needs it on Node 20 and later; worker threads inherit it.
    poolOptions: { forks: { execArgv: ["--no-node-snapshot"] } }
  }
})
