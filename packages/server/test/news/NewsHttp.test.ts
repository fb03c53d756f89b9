import { describe, expect, layer } from "@effect/vitest"
import { platformOptions } from "@trading-platform/core"
import { Duration, Effect, Layer } from "effect"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { postSse } from "../support/Sse.js"
import { openSse, openWs } from "../support/StreamClients.js"
import { call, expectError, signUp, TestServer } from "../support/TestServer.js"

const rss = `<?xml version="1.0"?>
<rss version="2.0"><channel><title>Local crypto news</title>
  <item><title>BTC breaks a record</title><link>http://news.test/btc-record</link>
    <description>&lt;p&gt;Bitcoin rose past its high.&lt;/p&gt;</description><pubDate>Tue, 02 Jan 2024 10:00:00 GMT</pubDate></item>
  <item><title>Ethereum upgrade ships</title><link>http://news.test/eth-upgrade</link>
    <description>The network upgraded; ETH fees fell.</description><pubDate>Mon, 01 Jan 2024 10:00:00 GMT</pubDate></item>
  <item><title>No link here</title></item>
</channel></rss>`
const atom = `<?xml version="1.0"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>Atom news</title><id>urn:a</id><updated>2024-01-03T00:00:00Z</updated>
  <entry><title>Solana and SOL traders</title><id>urn:a:1</id><link href="http://news.test/sol"/>
    <updated>2024-01-03T00:00:00Z</updated><summary>Solana volume doubled.</summary></entry>
  <entry><title>BTC again</title><id>urn:a:2</id><link href="http://news.test/btc-record"/>
    <updated>2024-01-03T01:00:00Z</updated></entry>
</feed>`

const item = (title: string, link: string) =>
  `<item><title>${title}</title><link>http://news.test/${link}</link></item>`
/** Stories for the live stream: one about BTC, one about ETH, one about both. */
const live = `<?xml version="1.0"?><rss version="2.0"><channel><title>Live</title>${
  item("Bitcoin ETF inflows", "live-btc")
}${item("ETH gas falls", "live-eth")}${item("BTC and ETH rally together", "live-both")}</channel></rss>`
const other = `<?xml version="1.0"?><rss version="2.0"><channel><title>Other</title>${
  item("BTC miners sell", "other-btc")
}</channel></rss>`
/** One story two feeds bring, and a later one. */
const twin = `<?xml version="1.0"?><rss version="2.0"><channel><title>Twin</title>${
  item("BTC twin story", "twin-btc")
}</channel></rss>`
const after = `<?xml version="1.0"?><rss version="2.0"><channel><title>After</title>${
  item("BTC after the twins", "after-btc")
}</channel></rss>`
/** Links of every kind: only http and https ones (a relative one resolved against the feed) are kept. */
const links = `<?xml version="1.0"?><rss version="2.0"><channel><title>Links</title>
  <item><title>Script</title><link>javascript:alert(document.cookie)</link></item>
  <item><title>Script, shouting</title><link> JavaScript:alert(1)</link></item>
  <item><title>Data</title><link>data:text/html,&lt;script&gt;alert(1)&lt;/script&gt;</link></item>
  <item><title>File</title><link>file:///etc/passwd</link></item>
  <item><title>Mail</title><link>mailto:someone@example.com</link></item>
  <item><title>Relative</title><link>/stories/relative</link></item>
  <item><title>Secure</title><link>https://news.test/secure</link></item>
</channel></rss>`

/**
 * A local feed server: good RSS and Atom (also at a second address), a malformed feed, a slow one,
 * a failing one, an endless one, links of every kind, and redirects (to itself and elsewhere).
 */
const feeds = { url: "", port: 0, asked: [] as Array<string> }
const FeedServer = Effect.acquireRelease(
  Effect.async<Server>((resume) => {
    const server = createServer((req, res) => {
      feeds.asked.push(req.url ?? "")
      const hop = /^\/hops\/(\d+)$/.exec(req.url ?? "")
      if (hop) {
        const left = Number(hop[1])
        return left === 0
          ? res.writeHead(200, { "content-type": "application/rss+xml" }).end(rss)
          : res.writeHead(302, { location: `/hops/${left - 1}` }).end()
      }
      switch (req.url) {
        case "/rss":
        case "/rss-mirror":
          return res.writeHead(200, { "content-type": "application/rss+xml" }).end(rss)
        case "/twin-a":
        case "/twin-b":
          return res.writeHead(200, { "content-type": "application/rss+xml" }).end(twin)
        case "/after":
          return res.writeHead(200, { "content-type": "application/rss+xml" }).end(after)
        case "/links":
          return res.writeHead(200, { "content-type": "application/rss+xml" }).end(links)
        case "/to-localhost":
          return res.writeHead(302, { location: `http://localhost:${feeds.port}/rss` }).end()
        case "/to-metadata":
          return res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" }).end()
        case "/endless": {
          res.writeHead(200, { "content-type": "application/rss+xml" }).write("<rss><channel>")
          const write = () => {
            if (!res.destroyed && res.write(item("BTC again", "more").repeat(100))) setImmediate(write)
            else if (!res.destroyed) res.once("drain", write)
          }
          return write()
        }
        case "/atom":
          return res.writeHead(200, { "content-type": "application/atom+xml" }).end(atom)
        case "/live":
          return res.writeHead(200, { "content-type": "application/rss+xml" }).end(live)
        case "/other":
          return res.writeHead(200, { "content-type": "application/rss+xml" }).end(other)
        case "/bad":
          return res.writeHead(200, { "content-type": "application/rss+xml" }).end("<rss><channel><item><title>cut")
        case "/slow":
          return void setTimeout(() => res.writeHead(200).end(rss), 60_000).unref()
        default:
          return res.writeHead(500).end("down")
      }
    })
    server.listen(0, "127.0.0.1", () => {
      feeds.port = (server.address() as AddressInfo).port
      feeds.url = `http://127.0.0.1:${feeds.port}`
      resume(Effect.succeed(server))
    })
  }),
  (server) => Effect.sync(() => server.closeAllConnections?.() ?? server.close())
)

const defaults = platformOptions()
/** The most bytes a feed may send here: far more than the fixtures, far less than the endless feed. */
const maxBytes = 64 * 1024
const NewsServer = Layer.unwrapScoped(Effect.map(FeedServer, () =>
  TestServer({
    config: {
      // Long enough for a local feed on a loaded machine; the slow feed answers far later.
      news: { ...defaults.news, timeout: Duration.seconds(3), maxBytes },
      // The feeds are on loopback: the operator's allow list lets that one host through.
      fetch: { allowHosts: ["127.0.0.1"] },
      assistant: { ...defaults.assistant, insightJobs: { ...defaults.assistant.insightJobs, concurrency: 1 } }
    }
  }).pipe(
    // The background fetcher passes once a second after the server listens (then not for a year
    // here): the tests start after it, so its pass cannot fetch a test's feeds before the test's
    // own refresh does (it once took the refresh's new stories, on a busy machine).
    Layer.tap(() => Effect.sleep("3 seconds"))
  )))

const addSource = (token: string, name: string, path: string) =>
  Effect.map(call("POST", "/api/news/sources", { token, body: { name, url: feeds.url + path } }), (r) => {
    expect(r.status).toBe(201)
    return r.body
  })

describe("news", () => {
  // Real time: a slow feed's timeout is real.
  layer(NewsServer, { timeout: "120 seconds", excludeTestServices: true })((it) => {
    it.effect("GET /api/news/sources answers the seeded public feeds, disabled, once per user", () =>
      Effect.gen(function*() {
        const alice = yield* signUp("alice")
        const first = yield* call("GET", "/api/news/sources", { token: alice.token })
        expect(first.status).toBe(200)
        expect(first.body.sources.map((s: any) => [s.name, s.enabled])).toEqual([["CoinDesk", false], [
          "Cointelegraph",
          false
        ], ["Decrypt", false]])
        for (const s of first.body.sources) expect(s.url).toMatch(/^https:\/\//)
        yield* call("DELETE", `/api/news/sources/${first.body.sources[0].id}`, { token: alice.token })
        const again = yield* call("GET", "/api/news/sources", { token: alice.token })
        expect(again.body.sources.length).toBe(2)
        expectError(yield* call("GET", "/api/news/sources"), 401, "unauthorized")
      }))

    it.effect("POST/PUT/DELETE manage the caller's sources; another user's answers 403, an unknown one 404, bad input 400", () =>
      Effect.gen(function*() {
        const alice = yield* signUp("alice")
        const bob = yield* signUp("bob")
        const created = yield* addSource(alice.token, " Local ", "/rss")
        expect(created).toMatchObject({ name: "Local", enabled: true, last_fetched_at: null, last_error: null })
        const renamed = yield* call("PUT", `/api/news/sources/${created.id}`, {
          token: alice.token,
          body: { name: "Renamed", enabled: false }
        })
        expect(renamed.body).toMatchObject({ id: created.id, name: "Renamed", url: created.url, enabled: false })
        expectError(
          yield* call("PUT", `/api/news/sources/${created.id}`, { token: bob.token, body: { enabled: true } }),
          403,
          "forbidden"
        )
        expectError(yield* call("DELETE", `/api/news/sources/${created.id}`, { token: bob.token }), 403, "forbidden")
        expectError(yield* call("PUT", "/api/news/sources/999999", { token: alice.token, body: {} }), 404, "not_found")
        expectError(
          yield* call("POST", "/api/news/sources", { token: alice.token, body: { name: "x", url: "ftp://nope" } }),
          400,
          "invalid_input"
        )
        expectError(
          yield* call("POST", "/api/news/sources", { token: alice.token, body: { name: "", url: feeds.url } }),
          400,
          "invalid_input"
        )
        expectError(yield* call("PUT", "/api/news/sources/abc", { token: alice.token, body: {} }), 400, "invalid_input")
        expect((yield* call("DELETE", `/api/news/sources/${created.id}`, { token: alice.token })).status).toBe(204)
        expectError(yield* call("DELETE", `/api/news/sources/${created.id}`, { token: alice.token }), 404, "not_found")
      }))

    it.effect("POST /api/news/refresh reads RSS and Atom, tags symbols, lists a story two feeds bring once, and reports malformed, slow and failing feeds", () =>
      Effect.gen(function*() {
        const alice = yield* signUp("alice")
        const sources = [
          yield* addSource(alice.token, "rss", "/rss"),
          yield* addSource(alice.token, "atom", "/atom"),
          yield* addSource(alice.token, "bad", "/bad"),
          yield* addSource(alice.token, "slow", "/slow"),
          yield* addSource(alice.token, "down", "/down")
        ]
        const refreshed = yield* call("POST", "/api/news/refresh", { token: alice.token })
        expect(refreshed.status).toBe(200)
        const byUrl = Object.fromEntries(refreshed.body.sources.map((s: any) => [s.url.slice(feeds.url.length), s]))
        // The Atom feed repeats the RSS feed's BTC link: each feed has it, the list shows it once.
        expect([byUrl["/rss"].new_items, byUrl["/atom"].new_items]).toEqual([2, 2])
        expect(byUrl["/bad"]).toMatchObject({ new_items: 0, error: "The feed is not a valid RSS, Atom or JSON feed" })
        // A timeout and an error status read as any other failure to fetch.
        expect(byUrl["/slow"].error).toBe("The feed could not be fetched")
        expect(byUrl["/down"].error).toBe("The feed could not be fetched")
        const again = yield* call("POST", "/api/news/refresh", { token: alice.token })
        expect(again.body.sources.map((s: any) => s.new_items)).toEqual([0, 0, 0, 0, 0])

        const news = yield* call("GET", "/api/news", { token: alice.token })
        expect(news.body.items.map((i: any) => [i.link.replace("http://news.test/", ""), i.symbols])).toEqual([
          ["sol", ["SOL"]],
          ["btc-record", ["BTC"]],
          ["eth-upgrade", ["ETH"]]
        ])
        expect(news.body.items[1]).toMatchObject({
          title: "BTC breaks a record",
          summary: "Bitcoin rose past its high.",
          published_at: "2024-01-02T10:00:00.000Z"
        })
        const eth = yield* call("GET", "/api/news?symbol=eth", { token: alice.token })
        expect(eth.body.items.map((i: any) => i.title)).toEqual(["Ethereum upgrade ships"])
        const listed = yield* call("GET", "/api/news/sources", { token: alice.token })
        const bad = listed.body.sources.find((s: any) => s.id === sources[2].id)
        expect(bad.last_error).toBe("The feed is not a valid RSS, Atom or JSON feed")
        expect(bad.last_fetched_at).not.toBeNull()

        // Another user sees stories only from feeds they enabled.
        const bob = yield* signUp("bob")
        expect((yield* call("GET", "/api/news", { token: bob.token })).body.items).toEqual([])
        expectError(yield* call("GET", "/api/news?limit=0", { token: bob.token }), 400, "invalid_input")
      }))

    it.effect("a stored story reaches, as a news event, the streams of its symbols whose users read its feed, and no other", () =>
      Effect.gen(function*() {
        const btc = yield* signUp("btc_watcher")
        const eth = yield* signUp("eth_watcher")
        const outsider = yield* signUp("outsider")
        yield* addSource(btc.token, "Live", "/live")
        yield* addSource(eth.token, "Live", "/live")
        yield* addSource(outsider.token, "Other", "/other")
        const streams = {
          btc: yield* openSse("?symbols=BTC", { token: btc.token }),
          eth: yield* openSse("?symbols=eth", { token: eth.token }),
          outsider: yield* openSse("?symbols=BTC,ETH", { token: outsider.token })
        }
        for (const sse of Object.values(streams)) yield* Effect.promise(() => sse.next("snapshot"))
        // On the WebSocket, a story comes on each subscribed news:{SYMBOL} channel it mentions.
        const wsUser = yield* signUp("ws_reader")
        yield* addSource(wsUser.token, "Live", "/live")
        const ws = yield* openWs(`?session_token=${wsUser.token}`)
        for (const channel of ["news:btc", "news:ETH"]) {
          ws.send({ type: "subscribe", channel })
          expect(yield* Effect.promise(() => ws.next())).toEqual({ type: "subscribed", channel })
        }

        // One refresh stores the three stories; each stream gets those about its symbols, in order.
        expect((yield* call("POST", "/api/news/refresh", { token: btc.token })).body.sources[0].new_items).toBe(3)
        const news = (sse: typeof streams.btc) => Effect.promise(() => sse.next("news"))
        const toBtc = [yield* news(streams.btc), yield* news(streams.btc)]
        expect(toBtc.map((e) => e.data.link)).toEqual(["http://news.test/live-btc", "http://news.test/live-both"])
        expect(toBtc[0]!.data).toEqual({
          id: expect.any(Number),
          title: "Bitcoin ETF inflows",
          link: "http://news.test/live-btc",
          summary: null,
          published_at: null,
          symbols: ["BTC"],
          feed_url: `${feeds.url}/live`
        })
        // The id keeps the trigger cursor, so resuming from a news event loses no trigger.
        expect(toBtc[0]!.id).toMatch(/^0-\d+$/)
        const toEth = [yield* news(streams.eth), yield* news(streams.eth)]
        expect(toEth.map((e) => e.data.link)).toEqual(["http://news.test/live-eth", "http://news.test/live-both"])
        const frames = []
        for (let i = 0; i < 4; i++) frames.push(yield* Effect.promise(() => ws.next((m) => m.type === "event")))
        expect(frames.map((f) => [f.channel, f.data.link])).toEqual([
          ["news:BTC", "http://news.test/live-btc"],
          ["news:ETH", "http://news.test/live-eth"],
          ["news:BTC", "http://news.test/live-both"],
          ["news:ETH", "http://news.test/live-both"]
        ])
        ws.socket.close(1000)

        // A user who does not read the feed gets none of its stories, only those of the feeds they read.
        yield* call("POST", "/api/news/refresh", { token: outsider.token })
        expect((yield* news(streams.outsider)).data.link).toBe("http://news.test/other-btc")
        for (const sse of Object.values(streams)) sse.close()
      }))

    it.effect("the assistant's get_news tool reads the caller's stories about a symbol", () =>
      Effect.gen(function*() {
        const alice = yield* signUp("alice")
        yield* addSource(alice.token, "rss", "/rss")
        yield* call("POST", "/api/news/refresh", { token: alice.token })
        const tools = yield* call("GET", "/api/ai/tools", { token: alice.token })
        expect(tools.body.tools.find((t: any) => t.name === "get_news").configured).toBe(true)
        const reply = yield* postSse("/api/ai/chat", alice.token, { message: "Any news on ETH?" })
        const result = reply.events.find((e) => e.event === "tool_result" && e.data.name === "get_news")!.data.result
        expect(result.items.map((i: any) => i.title)).toEqual(["Ethereum upgrade ships"])
        const text = reply.events.filter((e) => e.event === "delta").map((e) => e.data.text).join("")
        expect(text).toContain("\"Ethereum upgrade ships\" (ETH)")
      }))

    it.effect("an insight names the owner's recent stories about its symbol among its drivers and sources", () =>
      Effect.gen(function*() {
        const alice = yield* signUp("alice")
        yield* addSource(alice.token, "rss", "/rss")
        yield* call("POST", "/api/news/refresh", { token: alice.token })
        const queued = yield* call("POST", "/api/ai/insight", { token: alice.token, body: { symbol: "BTC" } })
        let task = queued.body
        while (task.status === "queued" || task.status === "running") {
          yield* Effect.sleep("50 millis")
          task = (yield* call("GET", `/api/ai/insight/${queued.body.task_id}`, { token: alice.token })).body
        }
        expect(task.status).toBe("completed")
        expect(task.result.drivers).toContain("In the news: \"BTC breaks a record\".")
        expect(task.result.sources).toContainEqual({
          name: "news",
          detail: "BTC breaks a record (http://news.test/btc-record)"
        })
      }))

    it.effect("a source's items are its own: two users adding the same feed, at one address or two, each get its items", () =>
      Effect.gen(function*() {
        const alice = yield* signUp("alice")
        const bob = yield* signUp("bob")
        const carol = yield* signUp("carol")
        yield* addSource(alice.token, "rss", "/rss")
        yield* addSource(bob.token, "rss mirror", "/rss-mirror")
        yield* addSource(carol.token, "rss", "/rss")
        const links = (token: string) =>
          Effect.map(call("GET", "/api/news", { token }), (r) => r.body.items.map((i: any) => [i.link, i.feed_url]))
        const ownRefresh = (token: string) =>
          Effect.map(call("POST", "/api/news/refresh", { token }), (r) => r.body.sources.map((s: any) => s.new_items))
        // Another test's refresh may have stored /rss already; the mirror is this test's alone.
        yield* ownRefresh(alice.token)
        expect(yield* ownRefresh(bob.token)).toEqual([2])
        const fromRss = [
          ["http://news.test/btc-record", `${feeds.url}/rss`],
          ["http://news.test/eth-upgrade", `${feeds.url}/rss`]
        ]
        expect(yield* links(alice.token)).toEqual(fromRss)
        expect(yield* links(carol.token)).toEqual(fromRss)
        expect(yield* links(bob.token)).toEqual([
          ["http://news.test/btc-record", `${feeds.url}/rss-mirror`],
          ["http://news.test/eth-upgrade", `${feeds.url}/rss-mirror`]
        ])
      }))

    it.effect("a story two of a reader's feeds bring reaches their stream once, and the stream of a reader of only one of them", () =>
      Effect.gen(function*() {
        const both = yield* signUp("twin_reader")
        const one = yield* signUp("one_twin_reader")
        yield* addSource(both.token, "twin a", "/twin-a")
        yield* addSource(both.token, "twin b", "/twin-b")
        yield* addSource(one.token, "twin b", "/twin-b")
        const streams = {
          both: yield* openSse("?symbols=BTC", { token: both.token }),
          one: yield* openSse("?symbols=BTC", { token: one.token })
        }
        for (const sse of Object.values(streams)) yield* Effect.promise(() => sse.next("snapshot"))
        const refreshed = yield* call("POST", "/api/news/refresh", { token: both.token })
        expect(refreshed.body.sources.map((s: any) => s.new_items)).toEqual([1, 1])
        const next = (sse: typeof streams.both) => Effect.promise(() => sse.next("news"))
        expect((yield* next(streams.both)).data.link).toBe("http://news.test/twin-btc")
        expect((yield* next(streams.one)).data).toMatchObject({
          link: "http://news.test/twin-btc",
          feed_url: `${feeds.url}/twin-b`
        })
        // The next story on the first stream is a later one, not the second copy.
        yield* addSource(both.token, "after", "/after")
        yield* call("POST", "/api/news/refresh", { token: both.token })
        expect((yield* next(streams.both)).data.link).toBe("http://news.test/after-btc")
        expect((yield* call("GET", "/api/news", { token: both.token })).body.items.map((i: any) => i.link)).toEqual([
          "http://news.test/after-btc",
          "http://news.test/twin-btc"
        ])
        for (const sse of Object.values(streams)) sse.close()
      }))

    it.effect("a story's link is kept only when it is http or https: javascript:, data:, file: and mailto: links are dropped", () =>
      Effect.gen(function*() {
        const alice = yield* signUp("alice")
        yield* addSource(alice.token, "links", "/links")
        const refreshed = yield* call("POST", "/api/news/refresh", { token: alice.token })
        expect(refreshed.body.sources).toMatchObject([{ new_items: 2, error: null }])
        const news = yield* call("GET", "/api/news", { token: alice.token })
        expect(news.body.items.map((i: any) => [i.title, i.link]).sort()).toEqual([
          ["Relative", `${feeds.url}/stories/relative`],
          ["Secure", "https://news.test/secure"]
        ])
      }))

    it.effect("the allow list lets its host through and nothing else: a name or an address it does not name is refused, at the door or at the fetch", () =>
      Effect.gen(function*() {
        const alice = yield* signUp("alice")
        // Written as an IP address, the host is refused at once, even when it is the allowed one's.
        for (
          const url of [
            `http://[::1]:${feeds.port}/rss`,
            `http://127.0.0.2:${feeds.port}/rss`,
            `http://[::ffff:127.0.0.1]:${feeds.port}/rss`
          ]
        ) {
          expectError(
            yield* call("POST", "/api/news/sources", { token: alice.token, body: { name: "x", url } }),
            400,
            "invalid_input"
          )
        }
        // A name is resolved when fetched: localhost is loopback, and not on the list.
        const named = yield* call("POST", "/api/news/sources", {
          token: alice.token,
          body: { name: "named", url: `http://localhost:${feeds.port}/rss?named` }
        })
        expect(named.status).toBe(201)
        const allowed = yield* addSource(alice.token, "allowed", "/rss")
        const refreshed = yield* call("POST", "/api/news/refresh", { token: alice.token })
        expect(refreshed.body.sources.map((s: any) => [s.id, s.error])).toEqual([
          [named.body.id, "The feed could not be fetched"],
          [allowed.id, null]
        ])
        expect(feeds.asked).not.toContain("/rss?named")
        const listed = yield* call("GET", "/api/news/sources", { token: alice.token })
        expect(listed.body.sources.find((s: any) => s.id === named.body.id).last_error).toBe(
          "The feed could not be fetched"
        )
      }))

    it.effect("a redirect is checked as the first URL was: one into an internal address is refused, and so is a fourth", () =>
      Effect.gen(function*() {
        const alice = yield* signUp("alice")
        const sources = [
          yield* addSource(alice.token, "to localhost", "/to-localhost"),
          yield* addSource(alice.token, "to metadata", "/to-metadata"),
          yield* addSource(alice.token, "three hops", "/hops/3"),
          yield* addSource(alice.token, "four hops", "/hops/4")
        ]
        feeds.asked.length = 0
        const refreshed = yield* call("POST", "/api/news/refresh", { token: alice.token })
        const byId = Object.fromEntries(refreshed.body.sources.map((s: any) => [s.id, s.error]))
        expect(sources.map((s: any) => byId[s.id])).toEqual([
          "The feed could not be fetched",
          "The feed could not be fetched",
          null,
          "The feed could not be fetched"
        ])
        // localhost's /rss was never asked for; the fourth redirect was not followed.
        expect(feeds.asked.filter((path) => path === "/rss")).toEqual([])
        expect(feeds.asked.filter((path) => path === "/hops/0")).toEqual(["/hops/0"])
      }))

    it.effect("an answer larger than NEWS_MAX_BYTES is cut off as it streams, and reads as any failure to fetch: a closed port and a 500 alike", () =>
      Effect.gen(function*() {
        const alice = yield* signUp("alice")
        const closed = yield* Effect.async<number>((resume) => {
          const probe = createServer()
          probe.listen(0, "127.0.0.1", () => {
            const port = (probe.address() as AddressInfo).port
            probe.close(() => resume(Effect.succeed(port)))
          })
        })
        const sources = [
          yield* addSource(alice.token, "endless", "/endless"),
          yield* addSource(alice.token, "down", "/down"),
          (yield* call("POST", "/api/news/sources", {
            token: alice.token,
            body: { name: "closed", url: `http://127.0.0.1:${closed}/rss` }
          })).body
        ]
        const refreshed = yield* call("POST", "/api/news/refresh", { token: alice.token })
        const byId = Object.fromEntries(refreshed.body.sources.map((s: any) => [s.id, s]))
        expect(sources.map((s: any) => byId[s.id])).toMatchObject([
          { new_items: 0, error: "The feed could not be fetched" },
          { new_items: 0, error: "The feed could not be fetched" },
          { new_items: 0, error: "The feed could not be fetched" }
        ])
      }))
  })

  // No allow list: the loopback feed server is as internal as any other address.
  layer(Layer.unwrapScoped(Effect.map(FeedServer, () => TestServer())), {
    timeout: "120 seconds",
    excludeTestServices: true
  })(
    "without an allow list",
    (it) => {
      it.effect("POST and PUT refuse a URL whose host is an internal address in any spelling, 400 invalid_input", () =>
        Effect.gen(function*() {
          const alice = yield* signUp("alice")
          const refused = [
            `${feeds.url}/rss`,
            `http://[::1]:${feeds.port}/rss`,
            `http://2130706433:${feeds.port}/rss`,
            `http://0x7f.1:${feeds.port}/rss`,
            "http://169.254.169.254/latest/meta-data/",
            "http://10.0.0.1/feed",
            "http://192.168.1.1/feed",
            "http://[fc00::1]/feed",
            "http://[ff02::1]/feed",
            "http://0.0.0.0/feed",
            `http://[::ffff:127.0.0.1]:${feeds.port}/rss`
          ]
          for (const url of refused) {
            const reply = yield* call("POST", "/api/news/sources", { token: alice.token, body: { name: "x", url } })
            expectError(reply, 400, "invalid_input")
            expect([url, reply.body.issues]).toMatchObject([url, [{ path: "url" }]])
          }
          const created = yield* call("POST", "/api/news/sources", {
            token: alice.token,
            body: { name: "public", url: "https://feeds.example.com/rss" }
          })
          expect(created.status).toBe(201)
          for (const url of refused) {
            expectError(
              yield* call("PUT", `/api/news/sources/${created.body.id}`, { token: alice.token, body: { url } }),
              400,
              "invalid_input"
            )
          }
          const kept = yield* call("GET", "/api/news/sources", { token: alice.token })
          expect(kept.body.sources.find((s: any) => s.id === created.body.id).url).toBe("https://feeds.example.com/rss")
        }))

      it.effect("a name that resolves to loopback is refused at the fetch, which never reaches it", () =>
        Effect.gen(function*() {
          const alice = yield* signUp("alice")
          const created = yield* call("POST", "/api/news/sources", {
            token: alice.token,
            body: { name: "localhost", url: `http://localhost:${feeds.port}/rss?unlisted` }
          })
          expect(created.status).toBe(201)
          const refreshed = yield* call("POST", "/api/news/refresh", { token: alice.token })
          expect(refreshed.body.sources).toEqual([{
            id: created.body.id,
            url: created.body.url,
            new_items: 0,
            error: "The feed could not be fetched"
          }])
          expect(feeds.asked).not.toContain("/rss?unlisted")
          expect((yield* call("GET", "/api/news", { token: alice.token })).body.items).toEqual([])
        }))
    }
  )
})
