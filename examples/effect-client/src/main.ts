// The typed Effect client against a running server (start one with `npm start` at the repository
// root, or set TRADING_API_URL). It signs up a new user, reads it back and shows a typed error.
import { FetchHttpClient } from "@effect/platform"
import { makeClient } from "@trading-platform/client"
import { Effect } from "effect"

const baseUrl = process.env["TRADING_API_URL"] ?? "http://127.0.0.1:3000"

const program = Effect.gen(function*() {
  const anonymous = yield* makeClient({ baseUrl })
  const health = yield* anonymous.health()
  console.log(`health: ${health.status}, version ${health.version}, storage ${health.storage}`)

  const name = `effect_${Date.now().toString(36)}`
  const password = "correct horse battery"
  const user = yield* anonymous.users.register({ payload: { email: `${name}@example.com`, username: name, password } })
  const login = yield* anonymous.users.login({ payload: { email: user.email, password } })

  // A client with the token sends `Authorization: Bearer ...` on every request.
  const client = yield* makeClient({ baseUrl, token: login.session_token })
  const me = yield* client.users.me()
  console.log(`signed in as ${me.username} (id ${me.id})`)

  // Errors are core's tagged classes, so they can be caught by tag.
  const reason = yield* anonymous.users.me().pipe(
    Effect.as("none"),
    Effect.catchTag("Unauthorized", (e) => Effect.succeed(e.reason))
  )
  console.log(`users.me without a token: Unauthorized (${reason})`)
})

Effect.runPromise(program.pipe(Effect.provide(FetchHttpClient.layer))).catch((error) => {
  console.error(error)
  process.exitCode = 1
})
