import { packageBuild } from "../../tsup.shared.js"

export default packageBuild({ index: "src/index.ts", main: "src/main.ts", docs: "src/docs/DocsPage.ts" })
