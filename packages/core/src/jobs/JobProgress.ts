import { Clock, Duration, Effect, Stream } from "effect"
import type { JobStatus } from "./JobStatus.js"

/** How often a watched job's row is read. Jobs run on any replica, so the row is the truth. */
export const progressInterval = Duration.seconds(1)

/**
 * The wait between two reads, in real time rather than the Clock's: it is how often a watcher is
 * told, not a time of the job's, and a stream must report while a test holds its clock still.
 */
const rest = Effect.sleep(progressInterval).pipe(Effect.withClock(Clock.make()))

const finished = (status: JobStatus) => status === "completed" || status === "failed" || status === "cancelled"

/**
 * A job's progress as a stream: `read` once now (failing at once when the job is unknown or
 * another user's), then every `progressInterval`, each time `same` says it changed, ending with
 * its final status.
 */
export const watchJob = <A extends { readonly status: JobStatus }, E, R>(
  read: Effect.Effect<A, E, R>,
  same: (a: A, b: A) => boolean
): Effect.Effect<Stream.Stream<A, E, R>, E, R> =>
  Effect.map(read, (first) =>
    Stream.concat(
      Stream.make(first),
      Stream.repeatEffect(Effect.zipRight(rest, read))
    ).pipe(
      Stream.changesWith(same),
      Stream.takeUntil((a) => finished(a.status))
    ))
