import { packageBuild } from "../../tsup.shared.js"
import { writeConsole } from "./src/console/ConsoleBuild.js"

export default packageBuild(
  {
    index: "src/index.ts",
    main: "src/main.ts",
    cli: "src/cli/Main.ts",
    docs: "src/docs/DocsPage.ts"
  },
  // The web console's files, which `console/ConsolePage.ts` reads from `dist/console/`.
  () => writeConsole("dist/console")
)
