import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const root = join(dirname(fileURLToPath(import.meta.url)), "../..")

/** Type-checks `files` under the repository's compiler settings; answers each error as `file(line): message`. */
export const typeErrors = (files: ReadonlyArray<string>): Array<string> => {
  const config = ts.readConfigFile(join(root, "tsconfig.base.json"), ts.sys.readFile)
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, root)
  const program = ts.createProgram(files, { ...options, noEmit: true })
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file && d.start !== undefined
      ? `${d.file.fileName}(${d.file.getLineAndCharacterOfPosition(d.start).line + 1}): `
      : ""
    return where + ts.flattenDiagnosticMessageText(d.messageText, "\n")
  })
}
