// Runs every bench/*.bench.ts (or those named on the command line) in turn; each prints its own table.
import { readdirSync } from "node:fs"
import { fileURLToPath, pathToFileURL } from "node:url"

const dir = fileURLToPath(new URL(".", import.meta.url))
const only = process.argv.slice(2)
const files = readdirSync(dir).filter((f) =>
  f.endsWith(".bench.ts") && (only.length === 0 || only.some((o) => f.includes(o)))
)
for (const file of files.sort()) {
  console.log(`\n## ${file}\n`)
  const bench = (await import(pathToFileURL(`${dir}/${file}`).href)) as { run: () => Promise<void> }
  await bench.run()
}
process.exit(0)
