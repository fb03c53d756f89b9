import { readFile } from "node:fs/promises"
import { packageBuild } from "../../tsup.shared.js"
import { bundleServer } from "./bundle.config.js"
import { describeSizes } from "./src/console/ConsoleBuild.js"

// The library entries for embedders; the server and the `trading-platform` command (`main.js`,
// `cli.js`) are bundled with their dependencies instead, for a faster start (see bundle.config.ts).
export default packageBuild(
  {
    index: "src/index.ts",
    docs: "src/docs/DocsPage.ts"
  },
  // With the web console's files, which `console/ConsolePage.ts` reads from `dist/console/`; the
  // build prints their gzip sizes (docs/console.md has the budget).
  {
    onSuccess: async () => {
      await bundleServer("dist")
      console.log(describeSizes(JSON.parse(await readFile("dist/console/manifest.json", "utf8")).sizes))
    }
  }
)
