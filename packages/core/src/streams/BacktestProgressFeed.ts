import { Duration, Effect, Schedule, Stream } from "effect"
import type { BacktestId } from "../backtests/Backtest.js"
import { Backtests } from "../backtests/Backtests.js"
import type { CurrentUserShape } from "../users/Authentication.js"
import type { BacktestProgress } from "./StreamEvents.js"

/** How often a watched backtest's row is read. Jobs run on any replica, so the row is the truth. */
export const progressInterval = Duration.seconds(1)

const finished = (p: BacktestProgress) => p.status === "completed" || p.status === "failed" || p.status === "cancelled"

/** The progress of the caller's backtests as streams, for the WebSocket's `backtest:{id}` channel. */
export class BacktestProgressFeed
  extends Effect.Service<BacktestProgressFeed>()("@trading-platform/core/BacktestProgressFeed", {
    effect: Effect.gen(function*() {
      const backtests = yield* Backtests
      const read = (caller: CurrentUserShape, id: BacktestId) =>
        Effect.map(backtests.get(caller, id), (b): BacktestProgress => ({
          id: b.id,
          status: b.status,
          progress: b.progress,
          error: b.error,
          metrics: b.metrics
        }))

      /**
       * The job's progress each time it changes, ending with its final status. Fails at once (404,
       * 403) when the backtest is unknown or another user's.
       */
      const watch = (caller: CurrentUserShape, id: BacktestId) =>
        Effect.map(read(caller, id), (first) =>
          Stream.concat(
            Stream.make(first),
            Stream.fromSchedule(Schedule.spaced(progressInterval)).pipe(Stream.mapEffect(() => read(caller, id)))
          ).pipe(
            Stream.changesWith((a, b) => a.status === b.status && a.progress === b.progress),
            Stream.takeUntil(finished)
          )).pipe(Effect.withSpan("BacktestProgressFeed.watch", { attributes: { userId: caller.id, backtestId: id } }))

      return { watch } as const
    })
  })
{}
