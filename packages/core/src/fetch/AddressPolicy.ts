import { isIPv4, isIPv6 } from "node:net"

/** What an IP address is, as far as fetching a user's URL goes: only `public` may be fetched. */
export type AddressKind =
  | "public"
  | "unspecified"
  | "loopback"
  | "private"
  | "link-local"
  | "unique-local"
  | "multicast"
  | "ipv4-mapped"
  | "reserved"

type Range = readonly [base: number, prefix: number, kind: AddressKind]

const v4 = (a: number, b: number, c: number, d: number) => ((a << 24) | (b << 16) | (c << 8) | d) >>> 0

// IANA's special-purpose IPv4 registry, every block that is not globally reachable.
const v4Ranges: ReadonlyArray<Range> = [
  [v4(0, 0, 0, 0), 8, "unspecified"],
  [v4(10, 0, 0, 0), 8, "private"],
  [v4(100, 64, 0, 0), 10, "private"],
  [v4(127, 0, 0, 0), 8, "loopback"],
  [v4(169, 254, 0, 0), 16, "link-local"],
  [v4(172, 16, 0, 0), 12, "private"],
  [v4(192, 0, 0, 0), 24, "reserved"],
  [v4(192, 0, 2, 0), 24, "reserved"],
  [v4(192, 88, 99, 0), 24, "reserved"],
  [v4(192, 168, 0, 0), 16, "private"],
  [v4(198, 18, 0, 0), 15, "reserved"],
  [v4(198, 51, 100, 0), 24, "reserved"],
  [v4(203, 0, 113, 0), 24, "reserved"],
  [v4(224, 0, 0, 0), 4, "multicast"],
  [v4(240, 0, 0, 0), 4, "reserved"]
]

const inRange = (address: number, [base, prefix]: Range) =>
  prefix === 0 || (address >>> (32 - prefix)) === (base >>> (32 - prefix))

/** An IPv4 address in dotted decimal, as a 32-bit number (null when it is not one). */
const parseV4 = (text: string): number | null => {
  if (!isIPv4(text)) return null
  const [a, b, c, d] = text.split(".").map(Number) as [number, number, number, number]
  return v4(a, b, c, d)
}

const classifyV4 = (address: number): AddressKind => v4Ranges.find((range) => inRange(address, range))?.[2] ?? "public"

/** An IPv6 address (any spelling: `::` shortening, a dotted IPv4 tail, a zone) as its eight 16-bit groups. */
const parseV6 = (text: string): ReadonlyArray<number> | null => {
  const bare = text.replace(/%.*$/, "")
  if (!isIPv6(bare)) return null
  let groups = bare.toLowerCase()
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(groups)
  if (dotted) {
    const tail = parseV4(dotted[1]!)
    if (tail === null) return null
    groups = groups.slice(0, dotted.index) + `${(tail >>> 16).toString(16)}:${(tail & 0xffff).toString(16)}`
  }
  const [head, rest] = groups.split("::") as [string, string | undefined]
  const words = (part: string) => (part === "" ? [] : part.split(":").map((w) => Number.parseInt(w, 16)))
  const left = words(head)
  const right = rest === undefined ? [] : words(rest)
  const fill = rest === undefined ? [] : new Array<number>(8 - left.length - right.length).fill(0)
  const all = [...left, ...fill, ...right]
  return all.length === 8 ? all : null
}

const classifyV6 = (g: ReadonlyArray<number>): AddressKind => {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = g as [number, number, number, number, number, number, number, number]
  const embedded = (hi: number, lo: number) => ((hi << 16) | lo) >>> 0
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0) {
    if (g5 === 0xffff) return "ipv4-mapped"
    if (g5 === 0 && g6 === 0 && g7 === 0) return "unspecified"
    if (g5 === 0 && g6 === 0 && g7 === 1) return "loopback"
    // ::a.b.c.d (IPv4-compatible, deprecated) and the rest of ::/80.
    return "reserved"
  }
  if ((g0 & 0xfe00) === 0xfc00) return "unique-local"
  if ((g0 & 0xffc0) === 0xfe80) return "link-local"
  if ((g0 & 0xff00) === 0xff00) return "multicast"
  // NAT64's well-known prefix reaches the IPv4 address it embeds.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    return classifyV4(embedded(g6, g7))
  }
  // Only global unicast (2000::/3) is public; within it, 6to4 reaches the IPv4 address it embeds,
  // and IANA's special-purpose block (Teredo, benchmarking, ORCHID) and documentation are not.
  if ((g0 & 0xe000) !== 0x2000) return "reserved"
  if (g0 === 0x2002) return classifyV4(embedded(g1, g2))
  if (g0 === 0x2001 && (g1 < 0x0200 || g1 === 0x0db8)) return "reserved"
  if (g0 === 0x3fff && g1 < 0x1000) return "reserved"
  return "public"
}

/** The kind of an IPv4 (dotted decimal) or IPv6 address; null when `address` is not an IP address. */
export const classifyAddress = (address: string): AddressKind | null => {
  const four = parseV4(address)
  if (four !== null) return classifyV4(four)
  const six = parseV6(address.replace(/^\[(.*)\]$/, "$1"))
  return six === null ? null : classifyV6(six)
}

/**
 * The IP address a URL's host names, when it names one: the WHATWG URL parser has already turned
 * `2130706433`, `0x7f.1` and `0177.0.0.1` into `127.0.0.1`, and `[::ffff:127.0.0.1]` into
 * `[::ffff:7f00:1]`; the brackets are dropped here. Null for a DNS name.
 */
export const literalAddress = (hostname: string): string | null => {
  const bare = hostname.replace(/^\[(.*)\]$/, "$1")
  return isIPv4(bare) || isIPv6(bare) ? bare : null
}

/**
 * A host as the URL parser writes it (lower case, IPv4 in dotted decimal, IPv6 shortened in
 * brackets), so that an allow list entry and a URL's host compare equal however either is spelled.
 */
export const normalizeHost = (host: string): string | null => {
  const trimmed = host.trim()
  if (trimmed === "") return null
  const bracketed = isIPv6(trimmed) ? `[${trimmed}]` : trimmed
  try {
    const url = new URL(`http://${bracketed}/`)
    const bare = url.port === "" && url.pathname === "/" && url.search === "" && url.hash === "" && url.username === ""
    return bare ? url.hostname : null
  } catch {
    return null
  }
}
