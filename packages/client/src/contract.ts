/**
 * The HTTP contract the client is built on (schemas, error catalogue, the API definition, the retry
 * rule), bundled into this package: `instanceof` checks and schema decoding need no other package.
 */
export * from "@trading-platform/core/contract"
