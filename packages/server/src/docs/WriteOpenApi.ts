// `npm run openapi`: writes the OpenAPI document to docs/openapi.json (a test checks it is current).
import { writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { openApiDocument } from "./OpenApiDocument.js"

const target = fileURLToPath(new URL("../../../../docs/openapi.json", import.meta.url))
writeFileSync(target, `${JSON.stringify(openApiDocument(), null, 2)}\n`)
console.log(`Wrote ${target}`)
