import { describe, expect, it } from "@effect/vitest"
import { loadStepCounter } from "../../src/sandbox/StepCounting.js"

const countSteps = await loadStepCounter()

/** The rewritten source, which must be one. */
const counted = (source: string) => {
  const result = countSteps(source)
  if (!("code" in result)) throw new Error(result.text)
  return result
}

/** Runs a script (which sets `result`) with a counter, and answers its result and the steps it counted. */
const run = (source: string) => {
  const { code, counter } = counted(source)
  let steps = 0
  const value = new Function(counter, `let result\n${code}\nreturn result`)(() => steps++)
  return { value, steps }
}

describe("countSteps", () => {
  it("counts a step at each loop iteration and each function call, whatever the form", () => {
    const forms: Array<[string, number]> = [
      ["let s = 0; for (let i = 0; i < 5; i++) s += i; result = s", 5],
      ["let s = 0; for (const x of [1, 2, 3]) { s += x } result = s", 3],
      ["let s = 0; for (const k in { a: 1, b: 2 }) s++; result = s", 2],
      ["let i = 0; while (i < 4) i++; result = i", 4],
      ["let i = 0; do i++; while (i < 3); result = i", 3],
      ["function f(n) { return n ? f(n - 1) : 0 } result = f(3)", 4],
      ["const f = (n) => n, g = () => ({ a: 1 }); result = f(g().a)", 2],
      ["result = [1, 2, 3].map((x) => x * 2)", 3],
      ["class A { m() { return 1 } get g() { return this.m() } } result = new A().g", 2],
      ["function* g() { yield 1; yield 2 } result = [...g()]", 1],
      ["outer: for (let i = 0; i < 3; i++) { for (;;) continue outer } result = 0", 6],
      ["if (true) for (let i = 0; i < 2; i++) ; else result = 1", 2]
    ]
    for (const [source, steps] of forms) {
      const counted = run(source)
      expect(counted.steps, source).toBe(steps)
      expect(counted.value, source).toEqual(new Function(`let result\n${source}\nreturn result`)())
    }
  })

  it("inserts no line, so the program's positions keep their lines", () => {
    const source = "export function decide(data) {\n  for (const c of data.candles)\n    x(c)\n  return () => 1\n}\n"
    const { code } = counted(source)
    expect(code.split("\n").length).toBe(source.split("\n").length)
    expect(code.split("\n")[2]).toContain("x(c)")
  })

  it("names a counter the source does not contain, so no declaration of the program shadows it", () => {
    expect(counted("export const decide = () => 1").counter).toBe("__steps")
    expect(counted("let __steps = 1, __steps1 = 2\nexport const decide = () => 1").counter).toBe("__steps2")
    expect(countSteps("for (;;) {}", "tick")).toMatchObject({ code: "for (;;) {tick();}", counter: "tick" })
  })

  it("answers a syntax error with its line and column, as V8 writes them", () => {
    expect(countSteps("export function decide() {\n  return {\n}")).toEqual({
      text: "SyntaxError: Unexpected token [program.js:3:2]"
    })
  })
})
