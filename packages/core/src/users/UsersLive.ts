import { Users } from "./Users.js"

export { Users }

/** Users and their sessions on the platform's storage. */
export const UsersLive = Users.Default
