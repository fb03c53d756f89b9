import { defineConfig } from "tsup"

/** How every package builds: ESM and CommonJS with declarations; dependencies stay external. */
export const packageBuild = (entry: Record<string, string>) =>
  defineConfig({ entry, format: ["esm", "cjs"], dts: true, clean: true, sourcemap: true, target: "node20" })
