import type { Reporter, TestModule } from "vitest/node"

/** Ends the run with one plain line, `Tests: N passed, N failed, N skipped`, that any CI can read. */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, errors: ReadonlyArray<unknown>) {
    const count = { passed: 0, failed: 0, skipped: 0 }
    for (const module of modules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state
        if (state === "passed") count.passed++
        else if (state === "failed") count.failed++
        else count.skipped++
      }
      if (module.state() === "failed" && !module.children.size) count.failed++
    }
    count.failed += errors.length
    console.log(`\nTests: ${count.passed} passed, ${count.failed} failed, ${count.skipped} skipped`)
  }
}
