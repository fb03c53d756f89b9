import { useState } from "preact/hooks"
import {
  Check,
  Disclosure,
  EditFormShell,
  ErrorText,
  Input,
  RowActions,
  Table,
  useAction,
  useEditForm,
  useLoad
} from "./Controls.js"
import type { PromiseClient } from "./Session.js"

type Source = Awaited<ReturnType<PromiseClient["news"]["sources"]>>["sources"][number]

/** A new news feed, or a feed to rename, move or turn on or off. */
const SourceForm = ({ client, source, onDone }: { client: PromiseClient; source?: Source; onDone: () => void }) => {
  const f = useEditForm({ name: source?.name ?? "", url: source?.url ?? "", enabled: source?.enabled ?? true })
  return (
    <EditFormShell
      f={f}
      label={source === undefined ? "New news source" : `Edit ${source.name}`}
      submitLabel={source === undefined ? "Create source" : "Save source"}
      onSubmit={f.submit((payload) =>
        (source === undefined
          ? client.news.create({ payload })
          : client.news.update({ path: { source_id: source.id }, payload })).then(onDone)
      )}
      onCancel={onDone}
    >
      <Input f={f} name="name" label="Name" required />
      <Input f={f} name="url" label="Feed URL" />
      <Check f={f} name="enabled" label="Enabled" />
    </EditFormShell>
  )
}

/** The news feeds the caller reads, with the forms to add, change and delete them, and the latest stories from the enabled ones. */
export const NewsView = ({ client }: { client: PromiseClient }) => {
  const sources = useLoad(() => client.news.sources(), [])
  const stories = useLoad(() => client.news.list({ urlParams: { limit: 20 } }), [])
  const [editing, setEditing] = useState<Source>()
  const refresh = useAction()
  const done = () => {
    setEditing(undefined)
    sources.reload()
  }
  const list = sources.value?.sources ?? []
  return (
    <section>
      <h2>News sources</h2>
      <Disclosure label="New news source">
        {(close) => <SourceForm client={client} onDone={() => (close(), done())} />}
      </Disclosure>
      <ErrorText error={sources.error} />
      {sources.value !== undefined && (list.length === 0
        ? <p class="muted">No news sources.</p>
        : (
          <Table
            class="sources"
            headers={["source", "feed", "enabled", "last fetched", ""]}
            rows={list.map((s) => [
              s.name,
              <span class="text">{s.url}</span>,
              String(s.enabled),
              s.last_error ?? s.last_fetched_at?.slice(0, 16) ?? "–",
              <RowActions
                what="source"
                name={s.name}
                onEdit={() => setEditing(s)}
                onDelete={() => client.news.remove({ path: { source_id: s.id } }).then(done)}
              />
            ])}
          />
        ))}
      {editing !== undefined && <SourceForm key={editing.id} client={client} source={editing} onDone={done} />}
      <h3>
        Latest stories{" "}
        <button
          type="button"
          disabled={refresh.busy}
          onClick={() => void refresh.run(() => client.news.refresh().then(() => (sources.reload(), stories.reload())))}
        >
          Fetch now
        </button>
      </h3>
      <ErrorText error={refresh.error ?? stories.error} />
      {stories.value?.items.length === 0 && <p class="muted">No stories yet from the enabled sources.</p>}
      <ul class="stories">
        {stories.value?.items.map((item) => (
          <li>
            {/* Only a web address is a link: a feed's item could name any scheme. */}
            {/^https?:\/\//i.test(item.link)
              ? <a href={item.link} rel="noreferrer noopener" target="_blank">{item.title}</a>
              : item.title}
            <span class="muted">
              {" "}
              {item.published_at?.slice(0, 16) ?? ""} {item.symbols.join(", ")}
            </span>
          </li>
        ))}
      </ul>
    </section>
  )
}
