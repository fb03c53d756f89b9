import { Config } from "effect"

/** An integer setting checked by `valid`; nesting after validating keeps the variable's name in the error. */
export const integerSetting = (name: string, fallback: number, message: string, valid: (n: number) => boolean) =>
  Config.integer().pipe(Config.validate({ message, validation: valid }), Config.nested(name), Config.withDefault(fallback))

export const positiveInt = (name: string, fallback: number) =>
  integerSetting(name, fallback, "must be a whole number of at least 1", (n) => n >= 1)
