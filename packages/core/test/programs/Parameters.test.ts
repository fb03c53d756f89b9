import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { declaredParameters, resolveParameters } from "../../src/programs/Parameters.js"

const declared = Either.getOrThrow(declaredParameters({
  fast: { kind: "int", min: 2, max: 50, default: 10 },
  width: { kind: "float", min: 0.5, max: 3, default: 2 },
  side: { kind: "choice", choices: ["long", "short", 3, true], default: "long" }
}))

describe("declared parameters", () => {
  it("list in the declaration's order, each with its range or its choices", () => {
    expect(declared.map((p) => [p.name, p.kind, p.min, p.max, p.choices, p.default])).toEqual([
      ["fast", "int", 2, 50, null, 10],
      ["width", "float", 0.5, 3, null, 2],
      ["side", "choice", null, null, ["long", "short", 3, true], "long"]
    ])
  })

  it("name the first thing wrong", () => {
    const wrong = (exported: unknown) =>
      Either.getLeft(declaredParameters(exported)).pipe((o) => o._tag === "Some" ? o.value : "")
    expect(wrong({ a: { kind: "int", min: 0, max: 1, default: 2 } })).toBe(
      "parameters.a: default (2) must be within 0..1"
    )
    expect(wrong({ a: { kind: "float", min: 1, max: 1, default: 1 } })).toBe(
      "parameters.a: min (1) must be below max (1)"
    )
    expect(wrong({ a: { kind: "float", min: 0, max: Infinity, default: 1 } })).toContain("parameters.a.max")
    expect(wrong({ a: { kind: "int", min: 0, max: 1 } })).toContain("parameters.a.default")
    expect(wrong({ "1a": { kind: "int", min: 0, max: 1, default: 0 } })).toContain("\"1a\" is not a name")
    const many = Object.fromEntries(
      Array.from({ length: 51 }, (_, i) => [`p${i}`, { kind: "int", min: 0, max: 1, default: 0 }])
    )
    expect(wrong(many)).toBe("parameters: at most 50 parameters")
  })
})

describe("resolveParameters", () => {
  it("takes params as given without a declaration", () => {
    expect(resolveParameters(null, { anything: [1] })).toEqual(Either.right({ anything: [1] }))
  })

  it("completes the given params with the defaults, in the declaration's order", () => {
    expect(resolveParameters(declared, { side: 3, fast: 20 })).toEqual(Either.right({ fast: 20, width: 2, side: 3 }))
    // The ends of a range are in it; null takes the default.
    expect(resolveParameters(declared, { fast: 50, width: 0.5, side: null })).toEqual(
      Either.right({ fast: 50, width: 0.5, side: "long" })
    )
  })

  it("names every parameter wrong or unknown, as 400 issues", () => {
    const result = resolveParameters(declared, { fast: 10.5, width: 4, side: "both", slow: 1 })
    expect(Either.isLeft(result)).toBe(true)
    const invalid = Either.getLeft(result).pipe((o) => o._tag === "Some" ? o.value : undefined)!
    expect(invalid.issues).toEqual([
      { path: "params.slow", message: "is not a parameter of the program (it declares fast, width, side)" },
      { path: "params.fast", message: "must be a whole number" },
      { path: "params.width", message: "must be within 0.5..3" },
      { path: "params.side", message: "must be one of [\"long\",\"short\",3,true]" }
    ])
    expect(invalid.error).toContain("params.fast must be a whole number")
    expect(Either.isLeft(resolveParameters(declared, { fast: "10" }))).toBe(true)
  })
})
