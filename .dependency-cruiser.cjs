/**
 * How modules may import each other, checked by `packages/core/test/architecture/Layers.test.ts`
 * (and by `npx depcruise packages/core/src packages/server/src`).
 *
 * The layers of each package's `src/`, lowest first: a module may import modules of its own layer
 * and of the layers before it, never of a later one. An entry is a folder or a module (a path
 * without extension, to place it apart from its folder); `*` stands for the files at the root of
 * `src/`, which otherwise come last. A new feature adds its folder here, above what it uses.
 */
const layers = {
  core: [
    "time",
    "retry",
    "http",
    "indicators",
    "stats",
    "sandbox/SandboxLimits",
    "venues/MarginTiers",
    "sql/Notifications",
    "sql/Columns",
    "jobs",
    "fetch/AddressPolicy",
    "config",
    "fetch",
    "sql",
    "users",
    "system",
    "secrets",
    "accounts",
    "venues",
    "market",
    "trader",
    "sandbox",
    "trading",
    "programs",
    "backtests",
    "research",
    "analytics",
    "signals",
    "ranking",
    "risk",
    "automation",
    "news",
    "aitraders",
    "arena",
    "streams",
    "assistant",
    "*"
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
    "research",
    "analytics",
    "signals",
    "ranking",
    "automation",
    "risk",
    "arena",
    "news",
    "aitraders",
    "streams",
    "assistant",
    "docs",
    "console",
    "*",
    "cli"
  ]
}

/** The paths of an entry of `pkg`'s layer order. */
const pathOf = (pkg, entry) => {
  const src = `^packages/${pkg}/src/`
  if (entry === "*") return `${src}[^/]+\\.ts$`
  return entry.includes("/") ? `${src}${entry}\\.ts$` : `${src}${entry}(/|\\.ts$)`
}

/** For each layer, the rule that its modules import none of a later layer's. */
const layerRules = Object.entries(layers).flatMap(([pkg, order]) =>
  order.slice(0, -1).map((entry, i) => ({
    name: `layer-order`,
    comment: `${pkg}/src/${entry} imports only its own layer and those listed before it in .dependency-cruiser.cjs`,
    severity: "error",
    from: { path: pathOf(pkg, entry) },
    to: {
      path: order.slice(i + 1).map((later) => pathOf(pkg, later)),
      // A module listed apart from its folder (sandbox/SandboxLimits) keeps its own, lower place.
      pathNot: order.slice(0, i + 1).map((earlier) => pathOf(pkg, earlier))
    }
  }))
)

/** Modules of no layer: each package's sources outside every entry of its order. */
const unlisted = Object.entries(layers).map(([pkg, order]) => ({
  path: `^packages/${pkg}/src/`,
  pathNot: order.map((entry) => pathOf(pkg, entry))
}))

module.exports = {
  forbidden: [
    {
      name: "no-cycles",
      comment: "Imports run one way: a type lives with its owner, and lower layers never import upper ones.",
      severity: "error",
      from: {},
      to: { circular: true }
    },
    ...layerRules,
    ...unlisted.flatMap((modules) => [
      { name: "in-layer-order", comment: "Every folder has a place in the layer order.", severity: "error", from: modules, to: {} },
      { name: "in-layer-order", comment: "Every folder has a place in the layer order.", severity: "error", from: {}, to: modules }
    ]),
    {
      name: "no-other-features-repo",
      comment: "A feature uses another through its service, never through the other feature's repository.",
      severity: "error",
      from: { path: "^packages/core/src/([^/]+)/" },
      to: { path: "^packages/core/src/[^/]+/[^/]*Repo\\.ts$", pathNot: "^packages/core/src/$1/" }
    }
  ],
  options: {
    includeOnly: "^packages/(core|server)/src/",
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.base.json" },
    enhancedResolveOptions: {
      conditionNames: ["@trading-platform/source", "import", "require", "node", "default"]
    }
  }
}
