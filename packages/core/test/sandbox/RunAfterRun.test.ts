import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { vi } from "vitest"
import { ProgramRuntime } from "../../src/sandbox/ProgramRuntime.js"
import { bars, decisions } from "./Drive.js"
import { reportV8Unavailable, runtimes } from "./Runtimes.js"

// A search's trials run one program after another in one runtime (`oneProgram`); V8 reuses the
// context when the run before left the realm as it found it. Each run must still see what a fresh
// context shows, whatever the run before did.

const sandboxesMade = vi.hoisted(() => ({ count: 0 }))
vi.mock("../../src/sandbox/V8Sandbox.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/sandbox/V8Sandbox.js")>()
  return {
    ...original,
    makeV8Sandbox: (...args: Parameters<typeof original.makeV8Sandbox>) => {
      sandboxesMade.count++
      return original.makeV8Sandbox(...args)
    }
  }
})

/** One run of `code` over `count` bars with these params: the reasons of its decisions, parsed. */
const run = (code: string, params: unknown, count = 1, seed = 7) =>
  Effect.gen(function*() {
    const decider = yield* (yield* ProgramRuntime).load({ code, symbols: ["BTC"], timeframe: "1h", params, seed })
    return decisions(decider, bars(count)).map((d) => JSON.parse(d.reason!))
  }).pipe(Effect.scoped)

/** A program that, asked to, changes its realm with `change`, and reports `seen` at every bar. */
const changing = (change: string, seen: string) =>
  `export function decide(data) {
    if (data.params.change) { ${change} }
    return { operation: "close", reason: JSON.stringify(${seen}) }
  }`

/** What a run can leave behind in its realm, and what shows it. */
const changes = [
  { name: "a property added to a built-in's prototype", change: "Array.prototype.extra = 1", seen: "[].extra ?? null" },
  { name: "a built-in deleted", change: "delete Math.max", seen: "typeof Math.max" },
  {
    name: "a built-in's keys reordered",
    change:
      `const max = Object.getOwnPropertyDescriptor(Math, "max"); delete Math.max; Object.defineProperty(Math, "max", max)`,
    seen: `Object.getOwnPropertyNames(Math).indexOf("max")`
  },
  {
    name: "a built-in made non-extensible",
    change: "Object.preventExtensions(Math)",
    seen: "Object.isExtensible(Math)"
  },
  {
    name: "a built-in's prototype replaced",
    change: "Object.setPrototypeOf(Math, null)",
    seen: "Object.getPrototypeOf(Math) === Object.prototype"
  },
  {
    name: "an intrinsic reached only through an instance",
    change: "Object.getPrototypeOf([][Symbol.iterator]()).next = () => ({ done: true })",
    seen: "[...[1, 2]].length"
  },
  {
    name: "an accessor replaced",
    change: `Object.defineProperty(RegExp.prototype, "flags", { get: () => "x", configurable: true })`,
    seen: "/a/g.flags"
  },
  { name: "a global written", change: "globalThis.leftover = 1", seen: "typeof leftover" },
  { name: "a built-in function's own property", change: "Math.max.note = 1", seen: "Math.max.note ?? null" },
  {
    name: "a symbol-keyed property",
    change: `Array.prototype[Symbol.for("x")] = 1`,
    seen: `[][Symbol.for("x")] ?? null`
  },
  { name: "an element of Array.prototype", change: `Array.prototype[3] = "x"`, seen: "Array(5)[3] ?? null" },
  // V8's legacy statics; QuickJS has none.
  {
    name: "the RegExp statics of the run's last match",
    change: `/(b)/.exec("abc")`,
    seen: "[RegExp.$1, RegExp.input]",
    v8: true
  }
]

describe.each(runtimes)("$name runtime, a run after a run of the same program", ({ layer, runtime }) => {
  it.layer(layer(undefined, "oneProgram"))((it) => {
    it.effect.each(changes.filter((c) => runtime === "v8" || !("v8" in c)))(
      "does not see $name",
      ({ change, seen }) =>
        Effect.gen(function*() {
          const code = changing(change, seen)
          const fresh = yield* run(code, {})
          expect(yield* run(code, { change: true })).not.toEqual(fresh)
          expect(yield* run(code, {})).toEqual(fresh)
        })
    )

    it.effect("decides as in a runtime of its own: the window, ta, the clock and Math.random start afresh", () =>
      Effect.gen(function*() {
        // Over more bars than the window, with ta on data.candles and a different seed each run.
        const code = `export function decide(data) {
          const fast = ta.sma(data.candles, data.params.fast), slow = ta.sma(data.candles, 30)
          if (fast === null || slow === null || (fast > slow) === (data.candles.length % 2 === 0)) return { operation: "hold" }
          return { operation: "close", reason: JSON.stringify([data.candles.length, data.candles[0].time, Date.now(), Math.random(), fast]) }
        }`
        const runs = []
        for (const [fast, seed] of [[5, 1], [8, 2], [5, 1], [13, 3]] as const) {
          runs.push(yield* run(code, { fast }, 700, seed))
        }
        const alone = yield* Effect.forEach(
          [[5, 1], [8, 2], [13, 3]] as const,
          ([fast, seed]) => run(code, { fast }, 700, seed).pipe(Effect.provide(layer()))
        )
        expect(runs).toEqual([alone[0], alone[1], alone[0], alone[2]])
        expect(runs[0]!.length).toBeGreaterThan(10)
      }))
  })
})

const v8 = runtimes.find((r) => r.runtime === "v8")

describe.skipIf(v8 === undefined)("the V8 runtime serving one program's runs", () => {
  it.layer(v8!.layer(undefined, "oneProgram"))((it) => {
    it.effect("reuses its context while runs leave the realm as they found it, and starts a fresh one after one that did not", () =>
      Effect.gen(function*() {
        const code = changing("globalThis.leftover = 1", "typeof leftover")
        const registering = changing("new FinalizationRegistry(() => {}).register({}, 1)", "1")
        const made = () => sandboxesMade.count
        const before = made()
        for (let i = 0; i < 5; i++) yield* run(code, {})
        expect(made() - before).toBe(1)
        yield* run(code, { change: true })
        yield* run(code, {})
        expect(made() - before).toBe(2)
        // A registered callback could run during a later run: the realm counts as changed.
        yield* run(registering, { change: true })
        yield* run(registering, {})
        expect(made() - before).toBe(3)
        yield* run(registering, {})
        expect(made() - before).toBe(3)
      }))
  })
})

reportV8Unavailable()
