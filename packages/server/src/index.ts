/** The reference HTTP server and the helpers that embed the platform in another host. */
export { ApiLive } from "./ApiLive.js"
export { openApiDocument, OpenApiLive } from "./docs/OpenApiDocument.js"
export { type EmbedOptions, makeNodeHandler, makeWebHandler, type NodeHandler, type WebHandler } from "./Embed.js"
export { requestContext } from "./http/RequestContext.js"
export { ServerLive } from "./Server.js"
export { serverConfig, type ServerOptions } from "./ServerConfig.js"
export { leaseTtl, StreamLeases } from "./streams/StreamLeases.js"
export { EndStreamsOnShutdown } from "./streams/StreamsShutdown.js"
