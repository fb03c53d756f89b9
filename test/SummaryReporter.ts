import type { Reporter, TestCase, TestModule } from "vitest/node"

const slowestShown = 20

/**
 * Ends the run with the slowest tests and their times (so a slow test is seen where it is added),
 * then one plain line, `Tests: N passed, N failed, N skipped in M min`, that any CI can read.
 */
export default class SummaryReporter implements Reporter {
  private started = performance.now()

  onTestRunStart() {
    this.started = performance.now()
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>, errors: ReadonlyArray<unknown>) {
    const count = { passed: 0, failed: 0, skipped: 0 }
    const timed: Array<{ readonly test: TestCase; readonly millis: number }> = []
    for (const module of modules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state
        if (state === "passed") count.passed++
        else if (state === "failed") count.failed++
        else count.skipped++
        const millis = test.diagnostic()?.duration
        if (millis !== undefined) timed.push({ test, millis })
      }
      if (module.state() === "failed" && !module.children.size) count.failed++
    }
    count.failed += errors.length
    console.log(`\nThe ${slowestShown} slowest tests:`)
    for (const { millis, test } of timed.sort((a, b) => b.millis - a.millis).slice(0, slowestShown)) {
      console.log(
        `${(millis / 1000).toFixed(1).padStart(7)} s  ${
          test.module.moduleId.replace(/^.*?packages\//, "")
        } > ${test.fullName}`
      )
    }
    const minutes = (performance.now() - this.started) / 60_000
    console.log(
      `\nTests: ${count.passed} passed, ${count.failed} failed, ${count.skipped} skipped in ${minutes.toFixed(1)} min`
    )
  }
}
