import { integerSetting } from "@trading-platform/core"
import { Config, LogLevel } from "effect"

export interface ServerOptions {
  readonly port: number
  readonly host: string
  readonly logLevel: LogLevel.LogLevel
  /** Whether `/console` serves the web console. */
  readonly console: boolean
}

/** Where the reference server listens, and how much it logs (`docs/configuration.md`). */
export const serverConfig: Config.Config<ServerOptions> = Config.all({
  port: integerSetting(
    "PORT",
    3000,
    "must be a port number from 0 (any free port) to 65535",
    (n) => n >= 0 && n <= 65535
  ),
  host: Config.string("HOST").pipe(Config.withDefault("127.0.0.1")),
  logLevel: Config.logLevel("LOG_LEVEL").pipe(Config.withDefault(LogLevel.Info)),
  console: Config.literal("on", "off")("CONSOLE").pipe(Config.withDefault("on"), Config.map((value) => value === "on"))
})

export { settings } from "./ServerSettings.js"
