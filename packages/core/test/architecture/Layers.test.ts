import { describe, expect, it } from "@effect/vitest"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const packages = fileURLToPath(new URL("../../../", import.meta.url))

/**
 * The layers of each package's `src/`, lowest first: a module may import modules of its own layer
 * and of the layers before it, never of a later one. An entry is a folder or a module (a path
 * without extension, to place it apart from its folder); other files at the root of `src/` come last.
 * A new feature adds its folder here, above what it uses.
 */
const layers: Record<string, ReadonlyArray<string>> = {
  core: [
    "time",
    "retry",
    "http",
    "sandbox/SandboxLimits",
    "jobs",
    "config",
    "sql",
    "users",
    "system",
    "secrets",
    "accounts",
    "venues",
    "market",
    "trader",
    "sandbox",
    "programs",
    "backtests",
    "analytics",
    "signals",
    "ranking",
    "automation",
    "arena",
    "streams",
    "news",
    "assistant"
  ],
  server: [
    "Version",
    "http",
    "system",
    "users",
    "accounts",
    "venues",
    "market",
    "trader",
    "programs",
    "backtests",
    "analytics",
    "signals",
    "ranking",
    "automation",
    "arena",
    "streams",
    "news",
    "assistant",
    "docs",
    "console",
    "*",
    "cli"
  ]
}

const sourcesOf = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourcesOf(join(dir, entry.name))
      : entry.name.endsWith(".ts")
      ? [join(dir, entry.name)]
      : []
  )

/** Each module of the package (its path under `src/`, without extension) and the modules of the package it imports. */
const importGraph = (pkg: string) => {
  const src = join(packages, pkg, "src")
  const graph = new Map<string, Array<string>>()
  for (const file of sourcesOf(src)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true)
    const targets = importedFiles
      .map(({ fileName }) => fileName)
      .filter((name) => name.startsWith("."))
      .map((name) => relative(src, join(dirname(file), name)).replace(/\.js$/, ""))
      .filter((module) => existsSync(join(src, `${module}.ts`)))
    graph.set(relative(src, file).replace(/\.ts$/, ""), targets)
  }
  return graph
}

/** The import cycles among the modules (strongly connected components of more than one module, or a self-import). */
const cycles = (graph: Map<string, Array<string>>) => {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const found: Array<Array<string>> = []
  let next = 0
  const visit = (v: string) => {
    index.set(v, next)
    low.set(v, next++)
    stack.push(v)
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) === index.get(v)) {
      const component: Array<string> = []
      for (let w = stack.pop()!;; w = stack.pop()!) {
        component.push(w)
        if (w === v) break
      }
      if (component.length > 1 || graph.get(v)!.includes(v)) found.push(component.sort())
    }
  }
  for (const v of graph.keys()) if (!index.has(v)) visit(v)
  return found
}

describe.each(Object.keys(layers))("the modules of %s", (pkg) => {
  const graph = importGraph(pkg)
  const order = layers[pkg]!
  /** A module's place in the order: its own entry if it has one, else its folder's; root files last. */
  const layerOf = (module: string) => {
    const own = order.indexOf(module)
    if (own >= 0) return own
    // "*" stands for the package's root files where an entry must sit above them (the CLI runs `main`).
    const root = order.indexOf("*")
    return module.includes("/") ? order.indexOf(module.split("/")[0]!) : root >= 0 ? root : order.length
  }

  it("import each other without cycles", () => {
    expect(cycles(graph)).toEqual([])
  })

  it("sit in folders the layer order lists", () => {
    expect([...graph.keys()].filter((module) => layerOf(module) < 0)).toEqual([])
  })

  it("import only their own layer and the layers below it", () => {
    const upward = [...graph].flatMap(([module, targets]) =>
      targets.filter((target) => layerOf(target) > layerOf(module)).map((target) => `${module} -> ${target}`)
    )
    expect(upward).toEqual([])
  })
})
