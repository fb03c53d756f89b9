import { VenueAccounts } from "./VenueAccounts.js"

export { VenueAccounts }

/** Venue credentials of the caller's accounts, sealed at rest. */
export const VenueAccountsLive = VenueAccounts.Default
