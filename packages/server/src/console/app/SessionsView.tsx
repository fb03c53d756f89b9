import { useState } from "preact/hooks"
import { DeleteButton, ErrorText, Pager, Table, useLoad } from "./Controls.js"
import type { PromiseClient } from "./Session.js"

const pageSize = 20
const when = (iso: string | null) => iso === null ? "–" : iso.slice(0, 16).replace("T", " ")

/**
 * The caller's active session tokens (`GET /api/users/sessions`), newest first, 20 to a page: when
 * each was made and last used, until when it holds, from which browser; any but this tab's can be
 * revoked (`DELETE /api/users/sessions/{id}`; this tab's ends with Log out).
 */
export const SessionsView = ({ client }: { client: PromiseClient }) => {
  const [offset, setOffset] = useState(0)
  const sessions = useLoad(() => client.users.sessions({ urlParams: { limit: pageSize, offset } }), [offset])
  const list = sessions.value?.sessions ?? []
  return (
    <section>
      <h2>Sessions</h2>
      <p class="muted">
        Each login holds a token until it expires or is revoked. Revoke one you do not recognise; changing your password
        revokes them all.
      </p>
      <ErrorText error={sessions.error} />
      {sessions.value !== undefined && (
        <>
          <Table
            class="sessions"
            headers={["Session", "Created", "Last used", "Expires", "Browser", ""]}
            rows={list.map((s) => [
              `#${s.id}${s.current ? " (this tab)" : ""}`,
              when(s.created_at),
              when(s.last_used_at),
              when(s.expires_at),
              <span class="text">{s.user_agent ?? "–"}</span>,
              s.current
                ? <span class="muted">Log out to end it</span>
                : (
                  <DeleteButton
                    what="session"
                    name={`#${s.id}`}
                    onDelete={() => client.users.revokeSession({ path: { id: s.id } }).then(sessions.reload)}
                  />
                )
            ])}
          />
          <Pager limit={pageSize} offset={offset} shown={list.length} onPage={setOffset} />
        </>
      )}
    </section>
  )
}
