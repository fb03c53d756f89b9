/**
 * Where the API is, how the session is kept, and how its failures read. The session token stays in
 * this tab's session storage and goes out in the Authorization header only.
 */
import { createClient, type PromiseClient, type PromiseClientOptions, TradingApiError } from "@trading-platform/client"

// The API is served next to the console: `/console` → `/api/...`, `/trading/console` → `/trading/api/...`.
const baseUrl = location.origin + location.pathname.replace(/\/console\/?$/, "")
const tokenKey = "trading-platform-token"

export const anonymousClient = () => createClient({ baseUrl })

/** The client of the session this tab holds, if any (with its own WebSocket class, for a view that watches its socket). */
export const sessionClient = (options: Pick<PromiseClientOptions, "WebSocket"> = {}): PromiseClient | undefined => {
  const token = sessionStorage.getItem(tokenKey)
  return token === null ? undefined : createClient({ baseUrl, token, ...options })
}

export const keepSession = (token: string) => sessionStorage.setItem(tokenKey, token)
export const dropSession = () => sessionStorage.removeItem(tokenKey)

/** What went wrong, in the API's words: its error envelope's message and code. */
export const describe = (error: unknown) =>
  error instanceof TradingApiError
    ? `${error.message} (${error.code})`
    : String((error as { error?: string })?.error ?? (error as Error)?.message ?? error)

/** The line (and column) a compile error names, when the API answered one. */
export const errorLine = (error: unknown): { line: number; column?: number } | undefined => {
  const cause = error instanceof TradingApiError ? (error.cause as { line?: number; column?: number }) : undefined
  return cause?.line === undefined
    ? undefined
    : { line: cause.line, ...(cause.column === undefined ? {} : { column: cause.column }) }
}

export type { PromiseClient }
