import { packageBuild } from "../../tsup.shared.js"

export default packageBuild({
  index: "src/index.ts",
  main: "src/main.ts",
  cli: "src/cli/Main.ts",
  docs: "src/docs/DocsPage.ts"
})
