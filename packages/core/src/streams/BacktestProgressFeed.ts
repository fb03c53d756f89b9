import { Effect } from "effect"
import type { BacktestId } from "../backtests/Backtest.js"
import { Backtests } from "../backtests/Backtests.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { watchJob } from "../jobs/JobProgress.js"
import type { CurrentUserShape } from "../users/Authentication.js"
import type { BacktestProgress } from "./StreamEvents.js"

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
        watchJob(read(caller, id), (a, b) => a.status === b.status && a.progress === b.progress).pipe(
          withRequestSpan("BacktestProgressFeed.watch", { attributes: { userId: caller.id, backtestId: id } })
        )

      return { watch } as const
    })
  })
{}
