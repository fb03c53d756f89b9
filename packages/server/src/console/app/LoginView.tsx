import { useState } from "preact/hooks"
import { ErrorText, Field, useAction, useForm } from "./Controls.js"
import { anonymousClient, keepSession } from "./Session.js"

/** Log in, or register then log in; `onSession` once the token is kept. */
export const LoginView = ({ onSession }: { onSession: () => void }) => {
  const [registering, setRegistering] = useState(false)
  const { form, set } = useForm({ email: "", username: "", password: "" })
  const { busy, error, run } = useAction()
  const submit = (event: Event) => {
    event.preventDefault()
    void run(async () => {
      const client = anonymousClient()
      const credentials = { email: form.email, password: form.password }
      if (registering) await client.users.register({ payload: { ...credentials, username: form.username } })
      const { session_token } = await client.users.login({ payload: credentials })
      keepSession(session_token)
      onSession()
    })
  }
  return (
    <section class="login">
      <h1>Trading Platform</h1>
      <form onSubmit={submit}>
        <Field label="Email">
          <input name="email" type="email" required autocomplete="username" value={form.email} onInput={set("email")} />
        </Field>
        {registering && (
          <Field label="Username">
            <input name="username" required autocomplete="nickname" value={form.username} onInput={set("username")} />
          </Field>
        )}
        <Field label="Password">
          <input
            name="password"
            type="password"
            required
            autocomplete={registering ? "new-password" : "current-password"}
            value={form.password}
            onInput={set("password")}
          />
        </Field>
        <button type="submit" disabled={busy}>{registering ? "Register and log in" : "Log in"}</button>
        <ErrorText error={error} />
        <button type="button" class="link" onClick={() => setRegistering(!registering)}>
          {registering ? "I have an account" : "Create an account"}
        </button>
      </form>
    </section>
  )
}
