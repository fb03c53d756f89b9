import { Effect, Schema } from "effect"
import { ProgramInvalid, UnsupportedLanguage } from "../http/Errors.js"

/** The languages a program may be written in. */
export const ProgramLanguage = Schema.Literal("javascript", "typescript")
export type ProgramLanguage = typeof ProgramLanguage.Type

const isLanguage = Schema.is(ProgramLanguage)

/**
 * A program's source as the JavaScript module the sandbox runs. TypeScript goes through sucrase,
 * which strips types without type-checking and keeps every line where it was, so positions the
 * sandbox reports still point into the author's source.
 */
export const compileProgram = (
  code: string,
  language: string
): Effect.Effect<string, ProgramInvalid | UnsupportedLanguage> => {
  if (!isLanguage(language)) {
    return Effect.fail(
      new UnsupportedLanguage({ error: `Language "${language}" is not supported; use javascript or typescript` })
    )
  }
  if (language === "javascript") return Effect.succeed(code)
  // Loaded on first use: the compiler is not needed to start the server.
  return Effect.tryPromise({
    try: () =>
      import("sucrase").then((sucrase) => {
        // From the server's bundle, a dynamic import of this CommonJS package has its exports under `default`.
        const { transform } = sucrase.default ?? sucrase
        return transform(code, { transforms: ["typescript"], disableESTransforms: true }).code
      }),
    catch: (e) => {
      const loc = (e as { loc?: { line: number; column: number } }).loc
      return new ProgramInvalid({
        error: `The program does not compile: ${(e as Error).message}`,
        // sucrase counts columns from 1 already.
        ...(loc ? { line: loc.line, column: loc.column } : {})
      })
    }
  })
}
