import pkg from "../package.json" with { type: "json" }

/** The server package's version, as published (inlined by the build). */
export const version: string = pkg.version
