#!/usr/bin/env node
// `npm start`: the server from the sources, without compiling every module at every start. The
// sources are bundled (as the package build bundles them, `packages/server/bundle.config.ts`)
// into a cache named after the inputs' paths, sizes and modification times; a start finds the
// bundle of the current sources there, or builds it first (a few seconds), then runs it with this
// process's arguments. Editing, adding or removing a source file, or installing packages, makes
// the next start build again.
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const cache = join(root, "node_modules", ".cache", "trading-platform", "start")
// Older bundles are removed, but a few are kept: a server started from one may still load its threads' files.
const kept = 3

/** Every file the bundle is built from, or whose change could change it. */
const inputs = () => {
  const files = [
    fileURLToPath(import.meta.url),
    join(root, "package.json"),
    join(root, "tsconfig.json"),
    join(root, "tsconfig.base.json"),
    // npm rewrites it at every install, so changed dependencies rebuild too.
    join(root, "node_modules", ".package-lock.json"),
    join(root, "packages", "server", "bundle.config.ts")
  ]
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name))
      else files.push(join(dir, entry.name))
    }
  }
  for (const name of ["core", "server", "client"]) {
    files.push(join(root, "packages", name, "package.json"))
    walk(join(root, "packages", name, "src"))
  }
  return files
}

const fingerprint = () => {
  const hash = createHash("sha256")
  for (const file of inputs()) {
    const stat = existsSync(file) ? statSync(file) : undefined
    hash.update(`${relative(root, file)}\t${stat?.size ?? "-"}\t${stat?.mtimeMs ?? "-"}\n`)
  }
  return hash.digest("hex").slice(0, 16)
}

/** Builds into a directory of this process's own, then moves it into place (another start may be building the same). */
const build = async (target) => {
  const scratch = `${target}.${process.pid}.tmp`
  rmSync(scratch, { recursive: true, force: true })
  // The build scripts are TypeScript: loaded through tsx, only when building.
  const { tsImport } = await import("tsx/esm/api")
  const { bundleServer } = await tsImport("../packages/server/bundle.config.ts", import.meta.url)
  await bundleServer(scratch)
  try {
    renameSync(scratch, target)
  } catch (error) {
    if (!existsSync(target)) throw error
    rmSync(scratch, { recursive: true, force: true })
  }
  const builds = readdirSync(cache, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !entry.name.endsWith(".tmp"))
    .map((entry) => ({ path: join(cache, entry.name), time: statSync(join(cache, entry.name)).mtimeMs }))
    .sort((a, b) => b.time - a.time)
  for (const old of builds.slice(kept)) rmSync(old.path, { recursive: true, force: true })
}

const target = join(cache, fingerprint())
if (!existsSync(target)) {
  mkdirSync(cache, { recursive: true })
  await build(target)
}
await import(pathToFileURL(join(target, "main.js")).href)
