import { Schema } from "effect"
import { defaultedParam } from "./Defaults.js"
import { integerParam } from "./IdParam.js"

/** What a list endpoint answers when `limit` or `offset` is left out. */
export const pageDefaults = { limit: 50, offset: 0 } as const

/** `limit` (default 50, at most 500) and `offset` (default 0), accepted by every list endpoint. */
export const Pagination = Schema.Struct({
  limit: defaultedParam(integerParam(1, 500), pageDefaults.limit),
  offset: defaultedParam(integerParam(0), pageDefaults.offset)
})
export type Pagination = typeof Pagination.Type

/** The page asked for, with the defaults filled in. */
export const pageOf = (page: Pagination): { readonly limit: number; readonly offset: number } => ({
  ...pageDefaults,
  ...page
})
