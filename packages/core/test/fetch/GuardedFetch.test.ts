import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import {
  FetchFailed,
  makeGuardedFetch,
  maxRedirects,
  type Resolve,
  type ResolvedAddress
} from "../../src/fetch/GuardedFetch.js"

interface Feeds {
  readonly port: number
  readonly url: string
  /** The paths asked for, in order. */
  readonly asked: Array<string>
  /** Whether the endless answer's connection was closed by the reader. */
  readonly endlessClosed: { value: boolean }
}

const cap = 64 * 1024

/** A local server: a feed, redirects (to itself and elsewhere), an endless answer and an oversized one. */
const feedServer = Effect.acquireRelease(
  Effect.async<{ server: Server; feeds: Feeds }>((resume) => {
    const asked: Array<string> = []
    const endlessClosed = { value: false }
    let port = 0
    const handle = (req: IncomingMessage, res: ServerResponse) => {
      const path = req.url ?? "/"
      asked.push(path)
      const hop = /^\/hops\/(\d+)$/.exec(path)
      if (hop) {
        const left = Number(hop[1])
        return left === 0
          ? res.writeHead(200, { "content-type": "text/plain" }).end("arrived")
          : res.writeHead(302, { location: `/hops/${left - 1}` }).end()
      }
      switch (path) {
        case "/feed":
          return res.writeHead(200, { "content-type": "application/rss+xml" }).end("<rss>ok</rss>")
        case "/to-localhost":
          return res.writeHead(302, { location: `http://localhost:${port}/feed` }).end()
        case "/to-loopback-v6":
          return res.writeHead(301, { location: `http://[::1]:${port}/feed` }).end()
        case "/to-metadata":
          return res.writeHead(307, { location: "http://169.254.169.254/latest/meta-data/" }).end()
        // 127.0.0.2 written as one number: the allow list names 127.0.0.1 only.
        case "/to-decimal":
          return res.writeHead(308, { location: `http://2130706434:${port}/feed` }).end()
        case "/to-file":
          return res.writeHead(302, { location: "file:///etc/passwd" }).end()
        case "/endless": {
          // Chunked, no length: only counting what arrives can stop it.
          res.writeHead(200, { "content-type": "application/rss+xml" })
          const chunk = Buffer.alloc(8 * 1024, "a")
          const write = () => {
            if (res.destroyed) return
            if (res.write(chunk)) setImmediate(write)
            else res.once("drain", write)
          }
          res.on("close", () => {
            endlessClosed.value = true
          })
          return write()
        }
        case "/declared":
          res.writeHead(200, { "content-length": String(cap + 1) })
          return res.end(Buffer.alloc(cap + 1, "a"))
        case "/exact":
          return res.writeHead(200).end(Buffer.alloc(cap, "b"))
        default:
          return res.writeHead(404).end("not here")
      }
    }
    const server = createServer(handle)
    server.listen(0, "127.0.0.1", () => {
      port = (server.address() as AddressInfo).port
      resume(Effect.succeed({ server, feeds: { port, url: `http://127.0.0.1:${port}`, asked, endlessClosed } }))
    })
  }),
  ({ server }) => Effect.sync(() => server.closeAllConnections())
).pipe(Effect.map(({ feeds }) => feeds))

const get = (fetcher: ReturnType<typeof makeGuardedFetch>, url: string) =>
  fetcher.getText({ url, accept: "*/*", maxBytes: cap, timeout: "5 seconds" })

/** Why `url` was not fetched. */
const refusal = (fetcher: ReturnType<typeof makeGuardedFetch>, url: string) =>
  get(fetcher, url).pipe(
    Effect.flip,
    Effect.map((e) => {
      expect(e).toBeInstanceOf(FetchFailed)
      return e.reason
    })
  )

const noAllowList = makeGuardedFetch({ allowHosts: [] })
const loopbackAllowed = makeGuardedFetch({ allowHosts: ["127.0.0.1"] })

describe("the guarded fetcher", () => {
  it.scopedLive("refuses every internal address, in every spelling, before connecting", () =>
    Effect.gen(function*() {
      const feeds = yield* feedServer
      const p = feeds.port
      const urls = [
        `http://127.0.0.1:${p}/feed`,
        `http://[::1]:${p}/feed`,
        `http://2130706433:${p}/feed`,
        `http://0x7f.1:${p}/feed`,
        `http://0177.0.0.1:${p}/feed`,
        `http://127.1:${p}/feed`,
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/",
        "http://10.255.255.1/",
        "http://172.16.0.1/",
        "http://192.168.0.1/",
        "http://100.64.0.1/",
        "http://[fc00::1]/",
        "http://[fe80::1]/",
        "http://[ff02::1]/",
        "http://0.0.0.0/",
        `http://0.0.0.0:${p}/feed`,
        "http://[::]/",
        `http://[::ffff:127.0.0.1]:${p}/feed`,
        "http://[::ffff:8.8.8.8]/",
        "https://127.0.0.1/",
        // A DNS name is resolved, and refused for what it resolves to.
        `http://localhost:${p}/feed`
      ]
      const reasons = yield* Effect.forEach(urls, (url) => Effect.map(refusal(noAllowList, url), (r) => [url, r]))
      expect(reasons).toEqual(urls.map((url) => [url, "refused_address"]))
      expect(feeds.asked).toEqual([])
    }))

  it.scopedLive("refuses a name when any of the addresses it resolves to is internal", () =>
    Effect.gen(function*() {
      const resolve: Resolve = async (host) =>
        host === "mixed.test"
          ? [{ address: "93.184.215.14", family: 4 }, { address: "10.0.0.7", family: 4 }]
          : host === "v6.test"
          ? [{ address: "fd00::7", family: 6 }]
          : []
      const fetcher = makeGuardedFetch({ allowHosts: [] }, resolve)
      expect(yield* refusal(fetcher, "http://mixed.test/feed")).toBe("refused_address")
      expect(yield* refusal(fetcher, "http://v6.test/feed")).toBe("refused_address")
      expect(yield* refusal(fetcher, "http://nothing.test/feed")).toBe("unresolved")
    }))

  it.scopedLive("lets a host of the allow list through, and no other host with the same address", () =>
    Effect.gen(function*() {
      const feeds = yield* feedServer
      const fetched = yield* get(loopbackAllowed, `${feeds.url}/feed`)
      expect(fetched).toEqual({
        url: `${feeds.url}/feed`,
        contentType: "application/rss+xml",
        body: "<rss>ok</rss>"
      })
      // The URL parser writes 2130706433 as 127.0.0.1: the same host.
      expect((yield* get(loopbackAllowed, `http://2130706433:${feeds.port}/feed`)).body).toBe("<rss>ok</rss>")
      for (
        const other of [
          `http://localhost:${feeds.port}/feed`,
          `http://[::1]:${feeds.port}/feed`,
          `http://127.0.0.2:${feeds.port}/feed`,
          `http://[::ffff:127.0.0.1]:${feeds.port}/feed`
        ]
      ) {
        expect([other, yield* refusal(loopbackAllowed, other)]).toEqual([other, "refused_address"])
      }
      expect(feeds.asked).toEqual(["/feed", "/feed"])
    }))

  it.scopedLive("connects to the address it checked, resolving the name once", () =>
    Effect.gen(function*() {
      const feeds = yield* feedServer
      const answers: Array<ResolvedAddress> = []
      // A rebinding name: first the (allowed) local server, then an address that is not.
      const resolve: Resolve = async () => {
        const answer: ResolvedAddress = answers.length === 0
          ? { address: "127.0.0.1", family: 4 }
          : { address: "10.255.255.1", family: 4 }
        answers.push(answer)
        return [answer]
      }
      const fetcher = makeGuardedFetch({ allowHosts: ["rebind.test"] }, resolve)
      const fetched = yield* get(fetcher, `http://rebind.test:${feeds.port}/feed`)
      expect(fetched.body).toBe("<rss>ok</rss>")
      expect(answers.length).toBe(1)
    }))

  it.scopedLive("checks every redirect: one into an internal address or off http is refused", () =>
    Effect.gen(function*() {
      const feeds = yield* feedServer
      for (const path of ["/to-localhost", "/to-loopback-v6", "/to-metadata", "/to-decimal"]) {
        expect([path, yield* refusal(loopbackAllowed, feeds.url + path)]).toEqual([path, "refused_address"])
      }
      expect(yield* refusal(loopbackAllowed, `${feeds.url}/to-file`)).toBe("invalid_url")
      // Each redirect was asked for once; none of their targets was.
      expect(feeds.asked).toEqual(["/to-localhost", "/to-loopback-v6", "/to-metadata", "/to-decimal", "/to-file"])
    }))

  it.scopedLive(`follows at most ${maxRedirects} redirects`, () =>
    Effect.gen(function*() {
      const feeds = yield* feedServer
      expect((yield* get(loopbackAllowed, `${feeds.url}/hops/3`)).body).toBe("arrived")
      expect((yield* get(loopbackAllowed, `${feeds.url}/hops/3`)).url).toBe(`${feeds.url}/hops/0`)
      feeds.asked.length = 0
      expect(yield* refusal(loopbackAllowed, `${feeds.url}/hops/4`)).toBe("too_many_redirects")
      expect(feeds.asked).toEqual(["/hops/4", "/hops/3", "/hops/2", "/hops/1"])
    }))

  it.scopedLive("stops reading an answer past the byte cap, counted as it streams", () =>
    Effect.gen(function*() {
      const feeds = yield* feedServer
      expect(yield* refusal(loopbackAllowed, `${feeds.url}/endless`)).toBe("too_large")
      // The endless answer's connection was closed by the reader.
      const deadline = Date.now() + 60_000
      while (!feeds.endlessClosed.value && Date.now() < deadline) yield* Effect.sleep("10 millis")
      expect(feeds.endlessClosed.value).toBe(true)
      expect(yield* refusal(loopbackAllowed, `${feeds.url}/declared`)).toBe("too_large")
      expect((yield* get(loopbackAllowed, `${feeds.url}/exact`)).body.length).toBe(cap)
    }))

  it.scopedLive("fails an error status and a closed port alike, as FetchFailed", () =>
    Effect.gen(function*() {
      const feeds = yield* feedServer
      expect(yield* refusal(loopbackAllowed, `${feeds.url}/missing`)).toBe("status")
      // A port nothing listens on (the server's, once closed).
      const closed = yield* Effect.async<number>((resume) => {
        const probe = createServer()
        probe.listen(0, "127.0.0.1", () => {
          const port = (probe.address() as AddressInfo).port
          probe.close(() => resume(Effect.succeed(port)))
        })
      })
      expect(yield* refusal(loopbackAllowed, `http://127.0.0.1:${closed}/feed`)).toBe("unreachable")
      expect(yield* refusal(loopbackAllowed, "ftp://127.0.0.1/feed")).toBe("invalid_url")
    }))
})
