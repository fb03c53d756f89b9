import { ConfigError } from "effect"
import { describeIssues, type RawIssue, summarizeIssues } from "../http/DecodeFailure.js"

/** The leaves of a ConfigError; of two alternatives, a value that was given and is wrong beats one that is missing. */
const leaves = (error: ConfigError.ConfigError): Array<RawIssue> =>
  ConfigError.reduceWithContext(error, undefined, {
    andCase: (_, left, right) => [...left, ...right],
    // Several providers (flags, then the environment) each say something; the invalid value is the news.
    orCase: (_, left, right) => {
      const both = [...left, ...right]
      const invalid = both.filter((issue) => issue._tag !== "MissingData")
      return invalid.length > 0 ? invalid : both
    },
    invalidDataCase: (_, path, message) => [{ _tag: "InvalidData", path, message }],
    missingDataCase: (_, path, message) => [{ _tag: "MissingData", path, message }],
    sourceUnavailableCase: (_, path, message) => [{ _tag: "SourceUnavailable", path, message }],
    unsupportedCase: (_, path, message) => [{ _tag: "Unsupported", path, message }]
  })

/** A configuration error in plain words, naming each variable: `PORT must be an integer value; got 'abc'`. */
export const describeConfigError = (error: ConfigError.ConfigError): string =>
  summarizeIssues(
    describeIssues(leaves(error)).map((issue) => ({
      ...issue,
      // Config's own "Expected PORT to exist…" repeats the name the path already gives.
      message: issue.message.startsWith("Expected ") && issue.message.includes("to exist")
        ? "is not set"
        : issue.message
    }))
  )
