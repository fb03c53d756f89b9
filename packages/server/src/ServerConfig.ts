import { integerSetting } from "@trading-platform/core"
import { Config, ConfigError, Either, LogLevel } from "effect"

export interface ServerOptions {
  readonly port: number
  readonly host: string
  readonly logLevel: LogLevel.LogLevel
  /** Whether `/console` serves the web console. */
  readonly console: boolean
}

/**
 * A log level by the name the docs give it (`Warning`, `None`) or by Effect's label (`WARN`, `OFF`),
 * in any case: `Config.logLevel` reads only the labels, so the documented `Warning` was refused.
 */
const logLevel = Config.string("LOG_LEVEL").pipe(
  Config.mapOrFail((text) => {
    const name = text.toLowerCase()
    const level = LogLevel.allLevels.find((l) => l._tag.toLowerCase() === name || l.label.toLowerCase() === name)
    return level === undefined
      ? Either.left(
        ConfigError.InvalidData([], `must be All, Trace, Debug, Info, Warning, Error, Fatal or None; got '${text}'`)
      )
      : Either.right(level)
  }),
  Config.withDefault(LogLevel.Info)
)

/** Where the reference server listens, and how much it logs (`docs/configuration.md`). */
export const serverConfig: Config.Config<ServerOptions> = Config.all({
  port: integerSetting(
    "PORT",
    3000,
    "must be a port number from 0 (any free port) to 65535",
    (n) => n >= 0 && n <= 65535
  ),
  host: Config.string("HOST").pipe(Config.withDefault("127.0.0.1")),
  logLevel,
  console: Config.literal("on", "off")("CONSOLE").pipe(Config.withDefault("on"), Config.map((value) => value === "on"))
})

export { settings } from "./ServerSettings.js"
