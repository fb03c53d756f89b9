import { describe, expect, it } from "@effect/vitest"
import { classifyAddress, literalAddress, normalizeHost } from "../../src/fetch/AddressPolicy.js"

/** The address a URL's host names, as the fetcher sees it: through the URL parser. */
const hostOf = (url: string) => literalAddress(new URL(url).hostname)

describe("the address classifier", () => {
  it("names every internal IPv4 range", () => {
    expect(
      Object.fromEntries(
        [
          "0.0.0.0",
          "0.1.2.3",
          "10.0.0.1",
          "10.255.255.255",
          "100.64.0.1",
          "127.0.0.1",
          "127.255.0.9",
          "169.254.169.254",
          "172.16.0.1",
          "172.31.255.255",
          "192.0.0.8",
          "192.0.2.1",
          "192.168.1.1",
          "198.18.0.1",
          "198.51.100.7",
          "203.0.113.9",
          "224.0.0.1",
          "239.255.255.250",
          "240.0.0.1",
          "255.255.255.255"
        ].map((a) => [a, classifyAddress(a)])
      )
    ).toEqual({
      "0.0.0.0": "unspecified",
      "0.1.2.3": "unspecified",
      "10.0.0.1": "private",
      "10.255.255.255": "private",
      "100.64.0.1": "private",
      "127.0.0.1": "loopback",
      "127.255.0.9": "loopback",
      "169.254.169.254": "link-local",
      "172.16.0.1": "private",
      "172.31.255.255": "private",
      "192.0.0.8": "reserved",
      "192.0.2.1": "reserved",
      "192.168.1.1": "private",
      "198.18.0.1": "reserved",
      "198.51.100.7": "reserved",
      "203.0.113.9": "reserved",
      "224.0.0.1": "multicast",
      "239.255.255.250": "multicast",
      "240.0.0.1": "reserved",
      "255.255.255.255": "reserved"
    })
  })

  it("answers public for addresses beside the internal ranges", () => {
    for (
      const a of [
        "1.1.1.1",
        "8.8.8.8",
        "9.255.255.255",
        "11.0.0.0",
        "100.63.255.255",
        "100.128.0.0",
        "126.255.255.255",
        "128.0.0.1",
        "169.253.255.255",
        "172.15.255.255",
        "172.32.0.0",
        "192.167.255.255",
        "192.169.0.0",
        "223.255.255.255"
      ]
    ) {
      expect([a, classifyAddress(a)]).toEqual([a, "public"])
    }
    for (const a of ["2606:4700:4700::1111", "2a00:1450:4001:81b::200e", "2001:4860:4860::8888"]) {
      expect([a, classifyAddress(a)]).toEqual([a, "public"])
    }
  })

  it("names every internal IPv6 range, in any spelling", () => {
    expect(
      Object.fromEntries(
        [
          "::",
          "0:0:0:0:0:0:0:0",
          "::1",
          "0:0:0:0:0:0:0:1",
          "[::1]",
          "::ffff:127.0.0.1",
          "::ffff:7f00:1",
          "::FFFF:8.8.8.8",
          "::127.0.0.1",
          "fc00::",
          "fd12:3456::1",
          "fe80::1",
          "fe80::1%eth0",
          "febf::1",
          "fec0::1",
          "ff02::1",
          "ff05::2",
          "64:ff9b::7f00:1",
          "64:ff9b::a9fe:a9fe",
          "2002:7f00:1::",
          "2002:c0a8:101::1",
          "2001:db8::1",
          "2001::1",
          "100::1",
          "::2"
        ].map((a) => [a, classifyAddress(a)])
      )
    ).toEqual({
      "::": "unspecified",
      "0:0:0:0:0:0:0:0": "unspecified",
      "::1": "loopback",
      "0:0:0:0:0:0:0:1": "loopback",
      "[::1]": "loopback",
      "::ffff:127.0.0.1": "ipv4-mapped",
      "::ffff:7f00:1": "ipv4-mapped",
      "::FFFF:8.8.8.8": "ipv4-mapped",
      "::127.0.0.1": "reserved",
      "fc00::": "unique-local",
      "fd12:3456::1": "unique-local",
      "fe80::1": "link-local",
      "fe80::1%eth0": "link-local",
      "febf::1": "link-local",
      "fec0::1": "reserved",
      "ff02::1": "multicast",
      "ff05::2": "multicast",
      "64:ff9b::7f00:1": "loopback",
      "64:ff9b::a9fe:a9fe": "link-local",
      "2002:7f00:1::": "loopback",
      "2002:c0a8:101::1": "private",
      "2001:db8::1": "reserved",
      "2001::1": "reserved",
      "100::1": "reserved",
      "::2": "reserved"
    })
    // NAT64 and 6to4 to a public IPv4 address are public.
    expect(classifyAddress("64:ff9b::808:808")).toBe("public")
    expect(classifyAddress("2002:808:808::1")).toBe("public")
  })

  it("answers null for what is not an IP address", () => {
    for (const a of ["localhost", "example.com", "2130706433", "0x7f.1", "127.1", "1.2.3.256", "::g", ""]) {
      expect([a, classifyAddress(a)]).toEqual([a, null])
    }
  })

  it("reads the IP address of a URL's host in every spelling the URL parser knows", () => {
    expect(
      [
        "http://127.0.0.1:8080/",
        "http://2130706433/",
        "http://0x7f.1/",
        "http://0177.0.0.1/",
        "http://127.1/",
        "http://[::1]/",
        "http://[0:0:0:0:0:0:0:1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://169.254.169.254/latest/meta-data/",
        "http://0.0.0.0/",
        "http://[fc00::]/",
        "http://[ff02::1]/"
      ].map((url) => {
        const address = hostOf(url)
        return [url, address, address === null ? null : classifyAddress(address)]
      })
    ).toEqual([
      ["http://127.0.0.1:8080/", "127.0.0.1", "loopback"],
      ["http://2130706433/", "127.0.0.1", "loopback"],
      ["http://0x7f.1/", "127.0.0.1", "loopback"],
      ["http://0177.0.0.1/", "127.0.0.1", "loopback"],
      ["http://127.1/", "127.0.0.1", "loopback"],
      ["http://[::1]/", "::1", "loopback"],
      ["http://[0:0:0:0:0:0:0:1]/", "::1", "loopback"],
      ["http://[::ffff:127.0.0.1]/", "::ffff:7f00:1", "ipv4-mapped"],
      ["http://169.254.169.254/latest/meta-data/", "169.254.169.254", "link-local"],
      ["http://0.0.0.0/", "0.0.0.0", "unspecified"],
      ["http://[fc00::]/", "fc00::", "unique-local"],
      ["http://[ff02::1]/", "ff02::1", "multicast"]
    ])
    expect(hostOf("http://localhost/")).toBeNull()
    expect(hostOf("http://feeds.example.com/")).toBeNull()
  })

  it("writes allow list entries as the URL parser writes hosts, and refuses those with a port or a path", () => {
    expect(["127.0.0.1", " Feeds.Example.COM ", "::1", "[::1]", "2130706433", "localhost"].map(normalizeHost)).toEqual([
      "127.0.0.1",
      "feeds.example.com",
      "[::1]",
      "[::1]",
      "127.0.0.1",
      "localhost"
    ])
    for (const bad of ["", "example.com:8080", "example.com/feed", "user@example.com", "exa mple.com"]) {
      expect([bad, normalizeHost(bad)]).toEqual([bad, null])
    }
  })
})
