import { Effect } from "effect"
import type { CurrentUserShape } from "../../src/users/Authentication.js"
import type { SessionId } from "../../src/users/User.js"
import { Users } from "../../src/users/Users.js"

/** Registers a new user (a name unique to this process and call, after `prefix`) and answers them as a caller of the services. */
export const newCaller = (prefix: string) =>
  Effect.gen(function*() {
    const name = `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 10)}`
    const user = yield* Effect.flatMap(
      Users,
      (users) => users.register({ email: `${name}@example.com`, username: name, password: "long enough password" })
    )
    const caller: CurrentUserShape = {
      id: user.id,
      email: user.email,
      username: user.username,
      created_at: user.created_at,
      sessionId: 1 as SessionId
    }
    return caller
  })
