import { Clock, Duration, Effect, Option } from "effect"
import { withRequestSpan } from "../http/RequestSpan.js"
import { MarketData } from "../market/MarketData.js"
import type { Trigger } from "../signals/Signal.js"
import { SignalEngine } from "../signals/SignalEngine.js"
import { Signals } from "../signals/Signals.js"
import type { CurrentUserShape } from "../users/Authentication.js"
import { type Exchange, Venues } from "../venues/Venue.js"
import { type HubUpdate, MarketHub, type MarketMailbox } from "./MarketHub.js"
import type { FlowSummary, MarketEvent, MarketSnapshot, MarketStreamParams } from "./StreamEvents.js"

/** Triggers in a snapshot. */
const snapshotTriggers = 20
/** Resuming replays the triggers fired since the client's last event among the caller's latest this many. */
export const replayLimit = 100
const flowWindow = Duration.toMillis("1 hour")
/** Recent trades read for the taker flow (the venues answer at most about this many). */
const flowTrades = 1000

/**
 * An event id is `{cursor}-{n}`: `cursor` is the id of the last trigger the stream has sent (so a
 * client resuming with `Last-Event-ID` gets every later one), `n` counts the events of the stream.
 */
const cursorOf = (lastEventId: Option.Option<string>) =>
  Option.flatMap(lastEventId, (id) => Option.fromNullable(/^(\d+)-\d+$/.exec(id.trim())?.[1]).pipe(Option.map(Number)))

/** An open market-intelligence stream: its events as they become ready, pulled by whoever writes them. */
export interface MarketFeed {
  /**
   * The events ready now, in order (the snapshot and the replay first), possibly none; `undefined`
   * once the stream has ended (it fell behind, or the server stops).
   */
  readonly poll: () => ReadonlyArray<MarketEvent> | undefined
  /** Calls `f` once, as soon as `poll` has something. */
  readonly onReady: (f: () => void) => void
}

/**
 * The feed of a stream whose first events are `snapshot` and the `replay`ed triggers, then what
 * its mailbox hands over. Built apart from `open` so the stream holds only this, not what opening read.
 */
const makeFeed = (
  mailbox: MarketMailbox,
  snapshot: MarketSnapshot,
  replay: ReadonlyArray<Trigger>,
  from: number
): MarketFeed => {
  let cursor = from
  let n = 0
  const next = (event: MarketEvent["event"], data: unknown) => ({ event, id: `${cursor}-${++n}`, data } as MarketEvent)
  let first: Array<MarketEvent> | undefined = [next("snapshot", snapshot)]
  for (const trigger of replay) {
    cursor = trigger.id
    first.push(next("update", { kind: "trigger", trigger }))
  }
  return {
    poll: () => {
      if (first !== undefined) {
        const out = first
        first = undefined
        return out
      }
      // A stream that fell behind ends, its client resuming from its last event; so does every
      // stream when the server stops.
      const updates = mailbox.poll()
      if (!Array.isArray(updates)) return undefined
      const out: Array<MarketEvent> = []
      for (const update of updates as ReadonlyArray<HubUpdate>) {
        if (update.kind === "heartbeat") out.push(next("heartbeat", { timestamp: update.timestamp }))
        // Stories are not replayed on resume (the id's cursor counts triggers only): a client
        // back from away reads what it missed from `GET /api/news`.
        else if (update.kind === "news") out.push(next("news", update.item))
        else if (update.kind === "price") out.push(next("update", update))
        // Nor are accounts' events: `GET /api/account/{id}/risk/events`, `…/reconciliations` and `…/decisions` list them.
        else if (update.kind === "risk" || update.kind === "reconciliation" || update.kind === "decision") {
          out.push(next("update", update))
        } else if (update.trigger.id > cursor) {
          cursor = update.trigger.id
          out.push(next("update", update))
        }
      }
      return out
    },
    onReady: (f) => (first !== undefined ? f() : mailbox.onReady(f))
  }
}

/**
 * The market-intelligence stream (DESIGN §4 "Streams"): a snapshot of the symbols (prices and 24 h
 * figures, the last hour's taker flow and open-interest change, the caller's recent triggers), then
 * an `update` for each moved price and each of the caller's triggers, and a heartbeat every
 * `heartbeatInterval`. Resuming with `Last-Event-ID` first replays the triggers fired since that
 * event (among the caller's latest `replayLimit`).
 */
export class MarketIntelligence
  extends Effect.Service<MarketIntelligence>()("@trading-platform/core/MarketIntelligence", {
    effect: Effect.gen(function*() {
      const market = yield* MarketData
      const venues = yield* Venues
      const engine = yield* SignalEngine
      const hub = yield* MarketHub
      const signals = yield* Signals

      const flowOf = (exchange: Exchange, symbol: string, openInterest: number) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const from = now - flowWindow
          const [trades, samples] = yield* Effect.all([
            venues[exchange].trades(symbol, flowTrades).pipe(Effect.catchTag("UnknownSymbol", Effect.die)),
            engine.samples(exchange, symbol, from)
          ], { concurrency: 2 })
          const inWindow = trades.filter((t) => t.time >= from && t.time <= now)
          let buy = 0
          let sell = 0
          for (const t of inWindow) {
            if (t.side === "buy") buy += t.price * t.size
            else sell += t.price * t.size
          }
          // When the venue's recent trades do not reach back an hour, the window starts at the oldest.
          const since = inWindow.length === trades.length && trades.length === flowTrades
            ? Math.min(...inWindow.map((t) => t.time))
            : from
          const first = samples[0]
          return {
            taker_buy_volume: buy,
            taker_sell_volume: sell,
            open_interest: openInterest,
            open_interest_change: first === undefined ? null : openInterest - first.open_interest,
            since: new Date(since).toISOString()
          } satisfies FlowSummary
        })

      /**
       * The caller's stream of events; everything it holds is released with the scope (or when the
       * stream ends). Unknown symbols fail before anything is held.
       */
      const open = (caller: CurrentUserShape, params: MarketStreamParams, lastEventId: Option.Option<string>) =>
        Effect.gen(function*() {
          const { exchange = "venue1", symbols } = params
          yield* market.listed(exchange, symbols)
          const prices = yield* market.prices({ exchange, symbols })
          // Watching starts before the snapshot is taken, so nothing between the two is missed.
          const mailbox = yield* hub.mailbox(caller.id, { heartbeats: true })
          yield* mailbox.watch("triggers")
          yield* mailbox.watch("risk")
          yield* mailbox.watch("reconciliations")
          yield* mailbox.watch("decisions")
          for (const [symbol, snap] of Object.entries(prices.prices)) {
            yield* mailbox.watchPrice(exchange, symbol, snap.price)
            yield* mailbox.watchNews(symbol)
          }
          const flow = yield* Effect.forEach(
            Object.entries(prices.prices),
            ([symbol, snap]) => Effect.map(flowOf(exchange, symbol, snap.open_interest), (f) => [symbol, f] as const),
            { concurrency: 8 }
          )

          // From the trigger log, so a resumed stream may land on any replica, or on a restarted one.
          const latest = (yield* signals.triggers(caller, { limit: replayLimit, offset: 0 }).pipe(
            // Only a pool filter can be refused, and there is none.
            Effect.catchTags({ Forbidden: Effect.die, NotFound: Effect.die })
          )).triggers
          const resumeFrom = cursorOf(lastEventId)
          const replay = Option.match(resumeFrom, {
            onNone: () => [],
            onSome: (after) => latest.filter((t) => t.id > after).reverse()
          })
          const snapshot: MarketSnapshot = {
            exchange,
            timestamp: prices.timestamp,
            prices: prices.prices,
            flow: Object.fromEntries(flow),
            triggers: latest.slice(0, snapshotTriggers)
          }

          const from = Option.getOrElse(resumeFrom, () => Math.max(0, ...latest.map((t) => t.id)))
          return makeFeed(mailbox, snapshot, replay, from)
        }).pipe(
          withRequestSpan("MarketIntelligence.open", {
            attributes: { userId: caller.id, symbols: params.symbols.length }
          })
        )

      return { open } as const
    })
  })
{}
