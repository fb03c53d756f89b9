import type { Effect } from "effect"
import { waitForList } from "./Automation.js"

/** Polls the account's decision log until `done` holds (see `waitForList`). */
export const waitForRounds = (
  token: string,
  accountId: number,
  done: (rounds: ReadonlyArray<any>) => boolean,
  step?: Effect.Effect<void>
) => waitForList(token, `/api/account/${accountId}/decisions`, "decisions", done, step)
