import { Effect, Option } from "effect"
import { PlatformConfig } from "../config/PlatformConfig.js"
import { Forbidden, NotFound } from "../http/Errors.js"
import { withRequestSpan } from "../http/RequestSpan.js"
import { dieOnStorageFailure } from "../sql/StorageFailure.js"
import { now } from "../time/Now.js"
import type { CurrentUserShape } from "./Authentication.js"
import { OperatorsRepo } from "./OperatorsRepo.js"
import { UsersRepo } from "./UsersRepo.js"

/**
 * Who may see platform-wide figures: a user whose e-mail is in `OPERATOR_EMAILS`, or whom the
 * command line made an operator (`trading-platform operator grant EMAIL`). `requireOperator` is the one
 * check every operator-only operation makes.
 */
export class Operators extends Effect.Service<Operators>()("@trading-platform/core/Operators", {
  effect: Effect.gen(function*() {
    const repo = yield* OperatorsRepo
    const users = yield* UsersRepo
    const byConfig = new Set((yield* PlatformConfig).operatorEmails.map((email) => email.trim().toLowerCase()))

    const isOperator = (caller: CurrentUserShape) =>
      byConfig.has(caller.email.toLowerCase())
        ? Effect.succeed(true)
        : repo.isOperator(caller.id).pipe(Effect.map(Option.isSome), dieOnStorageFailure)

    /** Succeeds for an operator; a user gets 403 `forbidden`. */
    const requireOperator = (caller: CurrentUserShape) =>
      Effect.flatMap(isOperator(caller), (ok) =>
        ok
          ? Effect.void
          : Effect.fail(new Forbidden({ error: "Only operators may see platform-wide figures" }))).pipe(
          withRequestSpan("Operators.require", { attributes: { userId: caller.id } })
        )

    const userByEmail = (email: string) =>
      Effect.flatMap(
        users.findUserByEmail(email),
        Option.match({
          onNone: () => Effect.fail(new NotFound({ error: `No user with the e-mail ${email}` })),
          onSome: Effect.succeed
        })
      )

    /** Makes the user with this e-mail an operator (the command line's `operator grant`). */
    const grant = (email: string) =>
      Effect.gen(function*() {
        const user = yield* userByEmail(email)
        yield* repo.grant(user.id, yield* now)
      }).pipe(dieOnStorageFailure, withRequestSpan("Operators.grant"))

    /** Takes the flag back; a user named in `OPERATOR_EMAILS` stays an operator while it names them. */
    const revoke = (email: string) =>
      Effect.flatMap(userByEmail(email), (user) => repo.revoke(user.id)).pipe(
        dieOnStorageFailure,
        withRequestSpan("Operators.revoke")
      )

    /** Every operator's e-mail: those flagged, then those of `OPERATOR_EMAILS` (lower case) not among them. */
    const list = Effect.map(repo.listEmails(undefined), (rows) => {
      const flagged = rows.map((row) => row.email)
      const seen = new Set(flagged.map((email) => email.toLowerCase()))
      return { flagged, configured: [...byConfig].filter((email) => !seen.has(email)) }
    }).pipe(dieOnStorageFailure, withRequestSpan("Operators.list"))

    return { isOperator, requireOperator, grant, revoke, list } as const
  }),
  dependencies: [OperatorsRepo.Default, UsersRepo.Default]
}) {}
