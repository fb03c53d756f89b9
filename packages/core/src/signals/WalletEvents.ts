import type { WalletEvent } from "./Signal.js"
import type { WalletPosition, WalletSnapshot } from "./WalletActivity.js"

/** The relative size change (10 %) that counts as `size_changed` when a pool does not set one. */
export const defaultSizeChangeThreshold = 0.1

/**
 * What changed in a wallet between two syncs: its liquidations after `since`, then, per symbol,
 * a position opened, closed (unless it was liquidated), flipped from long to short or back, or
 * resized by at least `threshold` of its size.
 */
export const walletEvents = (
  address: string,
  previous: ReadonlyArray<WalletPosition>,
  snapshot: WalletSnapshot,
  since: number,
  now: number,
  threshold: number
): Array<{ readonly symbol: string; readonly event: WalletEvent }> => {
  const before = new Map(previous.map((p) => [p.symbol, p]))
  const after = new Map(snapshot.positions.map((p) => [p.symbol, p]))
  const at = new Date(now).toISOString()
  const out: Array<{ readonly symbol: string; readonly event: WalletEvent }> = []
  const liquidated = new Set<string>()
  for (const l of snapshot.liquidations) {
    if (l.time <= since || l.time > now) continue
    liquidated.add(l.symbol)
    out.push({
      symbol: l.symbol,
      event: {
        address,
        kind: "liquidated",
        previous_size: l.size,
        size: after.get(l.symbol)?.size ?? 0,
        price: l.price,
        time: new Date(l.time).toISOString()
      }
    })
  }
  for (const symbol of [...new Set([...before.keys(), ...after.keys()])].sort()) {
    const was = before.get(symbol)
    const is = after.get(symbol)
    const from = was?.size ?? 0
    const to = is?.size ?? 0
    const kind = from === 0
      ? "opened"
      : to === 0
      ? liquidated.has(symbol) ? undefined : "closed"
      : Math.sign(from) !== Math.sign(to)
      ? "flipped"
      : Math.abs(to - from) >= threshold * Math.abs(from)
      ? "size_changed"
      : undefined
    if (kind === undefined || (from === 0 && to === 0)) continue
    out.push({
      symbol,
      event: { address, kind, previous_size: from, size: to, price: (is ?? was)!.entry_price, time: at }
    })
  }
  return out
}
