import { Either } from "effect"
import type { InvalidInput } from "../http/ErrorClasses.js"
import { invalidField } from "../http/InvalidField.js"
import type { ProgramParameter } from "../programs/Parameters.js"
import type { SpaceEntry } from "./Optimization.js"
import type { Dimension, Space } from "./Search.js"

const dimensionOf = (
  p: ProgramParameter,
  entry: SpaceEntry
): Either.Either<Dimension, InvalidInput> => {
  const path = `space.${p.name}`
  if (p.kind === "choice") {
    if (entry.min !== undefined || entry.max !== undefined || entry.step !== undefined || entry.steps !== undefined) {
      return Either.left(invalidField(path, "is a choice: give `choices`, not a range"))
    }
    const choices = entry.choices ?? p.choices!
    const unknown = choices.find((c) => !p.choices!.includes(c))
    if (unknown !== undefined) {
      return Either.left(
        invalidField(`${path}.choices`, `${JSON.stringify(unknown)} is not one of ${JSON.stringify(p.choices)}`)
      )
    }
    return Either.right({ name: p.name, kind: "choice", choices })
  }
  if (entry.choices !== undefined) return Either.left(invalidField(path, `is a ${p.kind}: give a range, not choices`))
  const min = entry.min ?? p.min!
  const max = entry.max ?? p.max!
  if (min < p.min! || max > p.max! || !(min < max)) {
    return Either.left(invalidField(path, `must be a range within ${p.min}..${p.max} with min below max`))
  }
  if (p.kind === "int") {
    if (entry.steps !== undefined) return Either.left(invalidField(`${path}.steps`, "is for floats: give `step`"))
    if (!Number.isInteger(min) || !Number.isInteger(max)) {
      return Either.left(invalidField(path, "must have whole-number ends"))
    }
    return Either.right({ name: p.name, kind: "int", min, max, step: entry.step ?? 1 })
  }
  if (entry.step !== undefined) return Either.left(invalidField(`${path}.step`, "is for ints: give `steps`"))
  return Either.right({ name: p.name, kind: "float", min, max, steps: entry.steps ?? 10 })
}

/**
 * The searched dimensions, in the declaration's order, once every name is a declared parameter and
 * every range lies within its declaration (400 naming the entry).
 */
export const searchSpace = (
  declared: ReadonlyArray<ProgramParameter> | null,
  space: Readonly<Record<string, SpaceEntry>>
): Either.Either<Space, InvalidInput> => {
  if (declared === null || declared.length === 0) {
    return Either.left(invalidField("space", "needs declared parameters: the program exports no `parameters`"))
  }
  const unknown = Object.keys(space).find((name) => !declared.some((p) => p.name === name))
  if (unknown !== undefined) {
    return Either.left(
      invalidField(
        `space.${unknown}`,
        `is not a parameter of the program (it declares ${declared.map((p) => p.name).join(", ")})`
      )
    )
  }
  return Either.all(declared.filter((p) => space[p.name] !== undefined).map((p) => dimensionOf(p, space[p.name]!)))
}
