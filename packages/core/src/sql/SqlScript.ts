import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

// Each script's text by its effect, so the migrated template's key can name what the migrations run.
const texts = new WeakMap<object, string>()

/** A migration's statements, run as one script (several statements, no parameters). */
export const script = (text: string) => {
  const run = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
  texts.set(run, text)
  return run
}

/** The statements of a migration made by `script`; undefined for any other effect. */
export const scriptText = (migration: object): string | undefined => texts.get(migration)
