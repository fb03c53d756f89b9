import { Context, type Effect, type Queue, type Scope, type Stream } from "effect"
import type { Exchange } from "../venues/Venue.js"
import type { MarketSample } from "./MarketSample.js"
import type { Trigger } from "./Signal.js"

/**
 * The live signal engine: samples the venues for every symbol of every enabled pool, evaluates
 * the pools after each round and writes a trigger row on each edge from not met to met. One
 * process at a time runs the rounds (a lease in the database); every process publishes every
 * trigger row to its own subscribers. The interval, the clock, the venues and the candles that
 * complete a price metric's window come from layers (`PlatformConfig.signals`, `Clock`, `Venues`,
 * `MarketData`).
 */
export interface SignalEngineShape {
  /**
   * Trigger events, each trigger row once per process as soon as this process sees it (at once
   * where it fired, within a sampling interval elsewhere). Each run of the stream subscribes anew.
   */
  readonly triggers: Stream.Stream<Trigger>
  /** A subscription to the trigger events, for as long as the scope lives. */
  readonly subscribe: Effect.Effect<Queue.Dequeue<Trigger>, never, Scope.Scope>
  /**
   * One sampling round and evaluation at the `Clock`'s current time, if this process holds (or
   * can take) the engine lease; answers the triggers it fired (none when another process holds it).
   */
  readonly evaluateNow: Effect.Effect<ReadonlyArray<Trigger>>
  /** The stored window of one exchange and symbol from `since` (epoch ms; default all kept), oldest first. */
  readonly samples: (exchange: Exchange, symbol: string, since?: number) => Effect.Effect<ReadonlyArray<MarketSample>>
  /** Starts the background rounds (every `signals.samplingInterval`) if they are not running. */
  readonly start: Effect.Effect<void>
  /** Stops the background rounds and hands the lease back; `start` resumes them. */
  readonly stop: Effect.Effect<void>
}

export class SignalEngine
  extends Context.Tag("@trading-platform/core/SignalEngine")<SignalEngine, SignalEngineShape>()
{}
