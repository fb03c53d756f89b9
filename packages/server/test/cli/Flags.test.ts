import { describe, expect, it } from "@effect/vitest"
import { platformConfig } from "@trading-platform/core"
import { Config, ConfigError, ConfigProvider, Effect, HashSet } from "effect"
import { parseArgs } from "../../src/CommandLine.js"
import { corsOriginsConfig } from "../../src/http/Cors.js"
import { serverConfig, settings } from "../../src/ServerConfig.js"

/** Every environment variable `config` reads, recorded by a provider that has none of them. */
const variablesRead = (config: Config.Config<unknown>) => {
  const read = new Set<string>()
  const provider = ConfigProvider.fromFlat(ConfigProvider.makeFlat({
    load: (path) => {
      read.add(path.join("_"))
      return Effect.fail(ConfigError.MissingData([...path], "unset"))
    },
    enumerateChildren: () => Effect.succeed(HashSet.empty()),
    patch: { _tag: "Empty" }
  }))
  Effect.runSync(Effect.either(Effect.withConfigProvider(config, provider)))
  return [...read].sort()
}

describe("command-line flags", () => {
  // What the server reads: the platform's settings, its own, and CORS.
  const read = [platformConfig, serverConfig, corsOriginsConfig].flatMap(variablesRead)

  it("the configuration reads the settings it is known to", () => {
    expect(read).toContain("CONVERSATION_RETENTION_DAYS")
    expect(read).toContain("PORT")
    expect(read.length).toBeGreaterThan(60)
  })

  it("every setting the server reads has a flag", () => {
    const flags = new Set<string>(settings.map(([name]) => name))
    expect(read.filter((name) => !flags.has(name))).toEqual([])
  })

  it("every flag names a setting the server reads", () => {
    expect(settings.map(([name]) => name).filter((name) => !read.includes(name))).toEqual([])
  })

  it("--conversation-retention-days sets CONVERSATION_RETENTION_DAYS", () => {
    const parsed = parseArgs(["--conversation-retention-days", "30"])
    expect(parsed._tag === "Run" && parsed.values.get("CONVERSATION_RETENTION_DAYS")).toBe("30")
  })
})

describe("LOG_LEVEL", () => {
  const levelOf = (value: string) =>
    Effect.runSync(
      Effect.either(
        Effect.withConfigProvider(serverConfig, ConfigProvider.fromMap(new Map([["LOG_LEVEL", value]])))
      )
    )

  it("takes every level the docs name, and Effect's labels, in any case", () => {
    const documented = ["All", "Trace", "Debug", "Info", "Warning", "Error", "Fatal", "None"]
    const labels = documented.map((name) => {
      const level = levelOf(name)
      return level._tag === "Right" ? level.right.logLevel.label : `refused ${name}`
    })
    expect(labels).toEqual(["ALL", "TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "OFF"])
    for (const value of ["WARN", "warn", "OFF", "warning"]) expect(levelOf(value)._tag, value).toBe("Right")
  })

  it("refuses any other name, listing the documented ones", () => {
    const refused = levelOf("Loud")
    expect(refused._tag).toBe("Left")
    expect(refused._tag === "Left" && String(refused.left)).toContain(
      "must be All, Trace, Debug, Info, Warning, Error, Fatal or None; got 'Loud'"
    )
  })
})
