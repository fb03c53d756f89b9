import { Data, type Duration, Effect } from "effect"
import * as dns from "node:dns"
import * as http from "node:http"
import * as https from "node:https"
import { isIPv4, type LookupFunction } from "node:net"
import { type FetchOptions, PlatformConfig } from "../config/PlatformConfig.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { type AddressKind, classifyAddress, literalAddress, normalizeHost } from "./AddressPolicy.js"

/** Redirects followed for one fetch; each is checked as the first URL was. */
export const maxRedirects = 3

export type FetchFailureReason =
  | "invalid_url"
  | "refused_address"
  | "unresolved"
  | "unreachable"
  | "status"
  | "too_many_redirects"
  | "too_large"
  | "timeout"

/**
 * A URL that could not be fetched. `reason` and `detail` are for the logs and the tests, never for
 * the user who gave the URL: telling them apart would let a user probe what the server can reach
 * (a closed port, a refused address, a 404). Users are told `fetchFailedText`.
 */
export class FetchFailed extends Data.TaggedError("FetchFailed")<{
  readonly reason: FetchFailureReason
  readonly detail: string
}> {}

/** What a user is told of any failed fetch, whatever its reason. */
export const fetchFailedText = "could not be fetched"

export interface ResolvedAddress {
  readonly address: string
  readonly family: 4 | 6
}

/** Every address a DNS name resolves to (the system resolver, as `dns.lookup`). */
export type Resolve = (hostname: string) => Promise<ReadonlyArray<ResolvedAddress>>

const systemResolve: Resolve = (hostname) =>
  dns.promises.lookup(hostname, { all: true, verbatim: true }).then((found) =>
    found.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }))
  )

export interface FetchRequest {
  readonly url: string
  readonly accept: string
  readonly maxBytes: number
  readonly timeout: Duration.DurationInput
}

export interface Fetched {
  /** The URL that answered, after redirects. */
  readonly url: string
  readonly contentType: string | undefined
  /** The answer decoded as UTF-8. */
  readonly body: string
}

const redirectStatuses = new Set([301, 302, 303, 307, 308])

type Hop =
  | { readonly _tag: "Redirect"; readonly location: string }
  | { readonly _tag: "Body"; readonly body: Buffer; readonly contentType: string | undefined }

const failed = (reason: FetchFailureReason, detail: string) => new FetchFailed({ reason, detail })

const parseUrl = (text: string, base?: URL): Effect.Effect<URL, FetchFailed> => {
  let url: URL
  try {
    url = new URL(text, base)
  } catch {
    return Effect.fail(failed("invalid_url", `${text} is not a URL`))
  }
  return url.protocol === "http:" || url.protocol === "https:"
    ? Effect.succeed(url)
    : Effect.fail(failed("invalid_url", `${url.protocol} is not http or https`))
}

// Answers every lookup of the connection with the address that was checked: no second DNS query
// that a rebinding name could answer differently.
const pinnedLookup = (target: ResolvedAddress): LookupFunction => (_hostname, options, callback) => {
  if (options.all) (callback as (e: null, all: Array<ResolvedAddress>) => void)(null, [target])
  else callback(null, target.address, target.family)
}

/** One request to the checked address: its body (read up to `maxBytes`, counted as it streams) or where it redirects. */
const hop = (url: URL, target: ResolvedAddress, accept: string, maxBytes: number) =>
  Effect.async<Hop, FetchFailed>((resume) => {
    let settled = false
    const settle = (result: Effect.Effect<Hop, FetchFailed>) => {
      if (settled) return
      settled = true
      resume(result)
    }
    const fail = (reason: FetchFailureReason, detail: string) => {
      request.destroy()
      settle(Effect.fail(failed(reason, detail)))
    }
    const client = url.protocol === "https:" ? https : http
    const request = client.request(url, {
      method: "GET",
      // A connection of its own: never a pooled socket opened for another address.
      agent: false,
      lookup: pinnedLookup(target),
      headers: { accept, "accept-encoding": "identity", "user-agent": "trading-platform-news" }
    }, (response) => {
      const status = response.statusCode ?? 0
      if (redirectStatuses.has(status)) {
        const location = response.headers.location
        request.destroy()
        return location === undefined
          ? settle(Effect.fail(failed("status", `answered ${status} without a location`)))
          : settle(Effect.succeed({ _tag: "Redirect", location }))
      }
      if (status < 200 || status > 299) return fail("status", `answered ${status}`)
      const declared = Number(response.headers["content-length"])
      if (declared > maxBytes) return fail("too_large", `declared ${declared} bytes, more than ${maxBytes}`)
      const chunks: Array<Buffer> = []
      let size = 0
      response.on("data", (chunk: Buffer) => {
        size += chunk.length
        if (size > maxBytes) fail("too_large", `sent more than ${maxBytes} bytes`)
        else chunks.push(chunk)
      })
      response.on(
        "end",
        () =>
          settle(
            Effect.succeed({ _tag: "Body", body: Buffer.concat(chunks), contentType: response.headers["content-type"] })
          )
      )
      response.on("error", (e) => fail("unreachable", e.message))
      response.on("close", () => {
        if (!response.complete) fail("unreachable", "the connection closed before the answer ended")
      })
    })
    request.on("error", (e) => fail("unreachable", e.message))
    request.end()
    return Effect.sync(() => request.destroy())
  })

/**
 * The one way to fetch a URL a user gave: its host is resolved once, every address it resolves to
 * must be public (not loopback, private, link-local, unique-local, multicast, unspecified,
 * IPv4-mapped or otherwise reserved) unless the host is in `allowHosts`, and the connection goes
 * to the address that was checked. Redirects (at most `maxRedirects`) are checked the same way,
 * and the answer is read as it streams, up to `maxBytes`. `resolve` is the system resolver but
 * for tests.
 */
export const makeGuardedFetch = (options: FetchOptions, resolve: Resolve = systemResolve) => {
  const allowed = new Set(options.allowHosts.flatMap((host) => normalizeHost(host) ?? []))

  /** The address to connect to for `url`, once each address its host resolves to is checked. */
  const checkedTarget = (url: URL) =>
    Effect.gen(function*() {
      const host = url.hostname
      const literal = literalAddress(host)
      const addresses: ReadonlyArray<ResolvedAddress> = literal !== null
        ? [{ address: literal, family: isIPv4(literal) ? 4 : 6 }]
        : yield* Effect.tryPromise({
          try: () => resolve(host),
          catch: (e) => failed("unresolved", `${host} did not resolve: ${String(e)}`)
        })
      const first = addresses[0]
      if (first === undefined) return yield* Effect.fail(failed("unresolved", `${host} resolved to nothing`))
      if (allowed.has(host)) return first
      for (const { address } of addresses) {
        const kind = classifyAddress(address)
        if (kind !== "public") {
          return yield* Effect.fail(failed("refused_address", `${host} is ${address} (${kind ?? "not an address"})`))
        }
      }
      return first
    })

  /** Fetches `url` (GET), following redirects; any failure is a `FetchFailed`. */
  const getText = (request: FetchRequest): Effect.Effect<Fetched, FetchFailed> =>
    Effect.gen(function*() {
      let url = yield* parseUrl(request.url)
      for (let redirects = 0;; redirects++) {
        const target = yield* checkedTarget(url)
        const answer = yield* hop(url, target, request.accept, request.maxBytes)
        if (answer._tag === "Body") {
          return { url: url.href, contentType: answer.contentType, body: new TextDecoder().decode(answer.body) }
        }
        if (redirects === maxRedirects) {
          return yield* Effect.fail(failed("too_many_redirects", `more than ${maxRedirects} redirects`))
        }
        url = yield* parseUrl(answer.location, url)
      }
    }).pipe(
      Effect.timeoutFail({ duration: request.timeout, onTimeout: () => failed("timeout", "timed out") }),
      withRequestSpan("GuardedFetch.getText", { attributes: { url: request.url } })
    )

  /**
   * What `url`'s host is when it is an internal IP address (in any spelling the URL parser reads)
   * that the allow list does not name; null otherwise. Told without DNS, so a refusal at the door:
   * a DNS name is checked when fetched.
   */
  const literalRefusal = (url: string): AddressKind | null => {
    let host: string
    try {
      host = new URL(url).hostname
    } catch {
      return null
    }
    const literal = literalAddress(host)
    if (literal === null || allowed.has(host)) return null
    const kind = classifyAddress(literal)
    return kind === "public" ? null : kind
  }

  return { getText, literalRefusal } as const
}

/** Fetches URLs that users give, through `makeGuardedFetch` with the configured allow list. */
export class GuardedFetch extends Effect.Service<GuardedFetch>()("@trading-platform/core/GuardedFetch", {
  effect: Effect.map(PlatformConfig, ({ fetch }) => makeGuardedFetch(fetch))
}) {}
