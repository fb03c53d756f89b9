// Module resolve hook (node --import + module.register): appends every URL Node resolves to the
// file named by MODULE_LOG, so a test can tell which modules an import loaded.
import { appendFileSync } from "node:fs"

export async function resolve(specifier, context, next) {
  const result = await next(specifier, context)
  appendFileSync(process.env.MODULE_LOG, `${result.url}\n`)
  return result
}
