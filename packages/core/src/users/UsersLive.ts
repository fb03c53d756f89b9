import { Layer } from "effect"
import { Operators } from "./Operators.js"
import { SessionPurgeLive } from "./SessionPurge.js"
import { Users } from "./Users.js"
import { UsersRepo } from "./UsersRepo.js"

export { Operators, Users }

/** Users and their sessions on the platform's storage, the operators, and the purge of sessions past their retention. */
export const UsersLive = Layer.mergeAll(Users.Default, Operators.Default, SessionPurgeLive).pipe(
  Layer.provide(UsersRepo.Default)
)
