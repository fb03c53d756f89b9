import { packageBuild } from "../../tsup.shared.js"

// Core's contract is bundled in, so the client installs without the platform (docs/client.md).
export default packageBuild(
  { index: "src/index.ts", contract: "src/contract.ts" },
  { inline: { "@trading-platform/core/contract": "../core/src/contract.ts" } }
)
