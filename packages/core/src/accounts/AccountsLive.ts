import { Layer } from "effect"
import { Secrets } from "../secrets/Secrets.js"
import { Accounts } from "./Accounts.js"
import { AccountsRepo } from "./AccountsRepo.js"

export { Accounts }

// One Secrets for everyone: without SECRET_KEY in memory mode, each instance would have its own key.
/** The caller's accounts on the platform's storage, with the `Secrets` that seal their keys. */
export const AccountsLive = Accounts.DefaultWithoutDependencies.pipe(
  Layer.provideMerge(Layer.mergeAll(AccountsRepo.Default, Secrets.Default))
)
