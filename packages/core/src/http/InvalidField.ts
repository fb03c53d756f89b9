import { InvalidInput } from "./ErrorClasses.js"

/** A rule a service checks on one field: the envelope's sentence and its one issue, as a decoding failure says them. */
export const invalidField = (path: string, message: string) =>
  new InvalidInput({ error: `${path} ${message}`, issues: [{ path, message }] })
