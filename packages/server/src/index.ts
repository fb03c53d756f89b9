/**
 * The reference HTTP server and the helpers that embed the platform in another host.
 *
 * @module @trading-platform/server
 */
export { ApiLive } from "./ApiLive.js"
export { ConsoleLive } from "./console/ConsolePage.js"
export { openApiDocument, OpenApiLive } from "./docs/OpenApiDocument.js"
export { type EmbedOptions, makeNodeHandler, makeWebHandler, type NodeHandler, type WebHandler } from "./Embed.js"
export { requestContext } from "./http/RequestContext.js"
export { ServerLive } from "./Server.js"
export { serverConfig, type ServerOptions } from "./ServerConfig.js"
export { leaseTtl, type StreamLease, StreamLeases } from "./streams/StreamLeases.js"
export { EndStreamsOnShutdown } from "./streams/StreamsShutdown.js"
