import { Effect, Option } from "effect"
import { Forbidden, NotFound } from "../http/Errors.js"
import type { CurrentUserShape } from "./Authentication.js"
import type { UserId } from "./User.js"

/** Whom a row must belong to: the caller of a request, or the owner a background run acts for. */
export type Owner = Pick<CurrentUserShape, "id">

/**
 * The ownership rule on a looked-up row: 404 when it does not exist, 403 when it belongs to
 * another user. `what` names it in the message, e.g. `Program 7`.
 */
export const ownedBy =
  <A extends { readonly user_id: UserId }>(caller: Owner, what: string) =>
  <E, R>(found: Effect.Effect<Option.Option<A>, E, R>): Effect.Effect<A, E | NotFound | Forbidden, R> =>
    Effect.flatMap(found, (row): Effect.Effect<A, NotFound | Forbidden> => {
      if (Option.isNone(row)) return Effect.fail(new NotFound({ error: `${what} not found` }))
      if (row.value.user_id !== caller.id) {
        return Effect.fail(new Forbidden({ error: `${what} belongs to another user` }))
      }
      return Effect.succeed(row.value)
    })
