export type PresentedToken =
  | { readonly _tag: "None" }
  | { readonly _tag: "Token"; readonly token: string }
  /** An `Authorization` header that is not `Bearer <token>`. */
  | { readonly _tag: "Malformed" }

const none: PresentedToken = { _tag: "None" }
const malformed: PresentedToken = { _tag: "Malformed" }

/** What a token is read from: the platform's request, or `node:http`'s (the fast lane). */
export interface TokenCarrier {
  readonly headers: { readonly [name: string]: string | undefined }
  readonly url: string
}

/**
 * The session token a request presents: the `Authorization: Bearer` header when there is one
 * (the scheme is checked, case-insensitively as RFC 7235 says), else the legacy `?session_token=`.
 */
export const presentedToken = (request: TokenCarrier): PresentedToken => {
  const authorization = request.headers["authorization"]
  if (authorization !== undefined) {
    const token = /^Bearer +(\S+) *$/i.exec(authorization)?.[1]
    return token === undefined ? malformed : { _tag: "Token", token }
  }
  const query = request.url.indexOf("?")
  const token = query === -1 ? null : new URLSearchParams(request.url.slice(query + 1)).get("session_token")
  return token ? { _tag: "Token", token } : none
}
