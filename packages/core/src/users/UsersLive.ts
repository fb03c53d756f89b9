import { Layer } from "effect"
import { SessionPurgeLive } from "./SessionPurge.js"
import { Users } from "./Users.js"
import { UsersRepo } from "./UsersRepo.js"

export { Users }

/** Users and their sessions on the platform's storage, and the purge of sessions past their retention. */
export const UsersLive = Layer.mergeAll(Users.Default, SessionPurgeLive).pipe(Layer.provide(UsersRepo.Default))
