import { execFile } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"

const root = join(dirname(fileURLToPath(import.meta.url)), "../..")

// The compiler runs in a process of its own: a check takes up to a minute on a loaded machine, and
// done in the test's process it would block that process's event loop for all of it (long enough
// for vitest's 60-second calls between its processes to time out and fail the run).
const check = `import ts from "typescript"
const { files, compilerOptions } = JSON.parse(process.argv.at(-1))
const config = ts.readConfigFile("tsconfig.base.json", ts.sys.readFile)
const { options } = ts.parseJsonConfigFileContent(
  { ...config.config, compilerOptions: { ...config.config.compilerOptions, ...compilerOptions, noEmit: true } },
  ts.sys,
  process.cwd()
)
const errors = ts.getPreEmitDiagnostics(ts.createProgram(files, options)).map((d) => {
  const where = d.file && d.start !== undefined
    ? d.file.fileName + "(" + (d.file.getLineAndCharacterOfPosition(d.start).line + 1) + "): "
    : ""
  return where + ts.flattenDiagnosticMessageText(d.messageText, "\\n")
})
process.stdout.write(JSON.stringify(errors))
`

/**
 * Type-checks `files` under the repository's compiler settings (with `compilerOptions`, as in a
 * tsconfig, on top); answers each error as `file(line): message`.
 */
export const typeErrors = async (
  files: ReadonlyArray<string>,
  compilerOptions: Record<string, unknown> = {}
): Promise<Array<string>> => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--input-type=module", "--eval", check, JSON.stringify({ files, compilerOptions })],
    { cwd: root, maxBuffer: 64 * 2 ** 20 }
  )
  return JSON.parse(stdout)
}
