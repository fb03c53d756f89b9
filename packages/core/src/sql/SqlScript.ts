import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

/** A migration's statements, run as one script (several statements, no parameters). */
export const script = (text: string) => Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
