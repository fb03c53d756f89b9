import { useState } from "preact/hooks"
import { DeleteButton, ErrorText, Field, Pager, Table, useAction, usePages } from "./Controls.js"
import type { PromiseClient } from "./Session.js"

const conversationsPage = 10

interface Exchange {
  readonly question: string
  readonly answer: ReadonlyArray<{ readonly text?: string; readonly tool?: string }>
}

/** The stored messages of a conversation as the transcript shows them: each question with the answer after it. */
const transcriptOf = (
  messages: ReadonlyArray<{ role: string; content: string; tool_calls: ReadonlyArray<{ name: string }> }>
) =>
  messages.reduce<Array<Exchange>>((exchanges, m) => {
    if (m.role === "user") return [...exchanges, { question: m.content, answer: [] }]
    const last = exchanges.at(-1) ?? { question: "", answer: [] }
    const answer = [...last.answer, ...m.tool_calls.map((call) => ({ tool: call.name })), { text: m.content }]
    return [...exchanges.slice(0, -1), { ...last, answer }]
  }, [])

/**
 * A chat with the assistant, its answer written as it streams in; the caller's conversations, 10
 * to a page, each to open again (and go on with) or delete.
 */
export const AssistantView = ({ client }: { client: PromiseClient }) => {
  const [message, setMessage] = useState("")
  const [transcript, setTranscript] = useState<ReadonlyArray<Exchange>>([])
  const [conversation, setConversation] = useState<number>()
  const conversations = usePages(
    (urlParams) => client.assistant.conversations({ urlParams }),
    conversationsPage,
    []
  )
  const opening = useAction()
  const { error, run } = useAction()
  const open = (id: number | undefined) =>
    void opening.run(async () => {
      const messages = id === undefined ? [] : (await client.assistant.messages({
        path: { conversation_id: id as never },
        urlParams: { limit: 500 }
      })).messages
      setTranscript(transcriptOf(messages))
      setConversation(id)
    })
  const submit = (event: Event) => {
    event.preventDefault()
    const text = message.trim()
    if (text === "") return
    setMessage("")
    setTranscript((previous) => [...previous, { question: text, answer: [] }])
    const add = (part: Exchange["answer"][number]) =>
      setTranscript((
        previous
      ) => [...previous.slice(0, -1), { ...previous.at(-1)!, answer: [...previous.at(-1)!.answer, part] }])
    void run(async () => {
      for await (
        const { data, event: kind } of client.assistantChat({ message: text, conversation_id: conversation as never })
      ) {
        const d = data as Record<string, any>
        if (kind === "delta") add({ text: String(d.text) })
        if (kind === "tool_call") add({ tool: String(d.name) })
        if (kind === "done") setConversation(d.conversation_id)
        if (kind === "error") throw d
      }
    }).finally(conversations.reload)
  }
  return (
    <section>
      <h2>Assistant</h2>
      <div class="actions">
        <button type="button" onClick={() => open(undefined)} disabled={conversation === undefined}>
          New conversation
        </button>
        <ErrorText error={opening.error} />
      </div>
      {transcript.map((exchange) => (
        <>
          <p class="chat question">{exchange.question}</p>
          <div class="chat answer">
            {exchange.answer.map((part) => part.tool === undefined ? part.text : <div class="tool">→ {part.tool}</div>)}
          </div>
        </>
      ))}
      <form onSubmit={submit}>
        <Field label="Message">
          <textarea
            name="message"
            class="short"
            rows={3}
            placeholder="How is BTC doing on the 1h chart?"
            value={message}
            onInput={(e) => setMessage(e.currentTarget.value)}
          />
        </Field>
        <button type="submit">Ask</button>
        <ErrorText error={error} />
      </form>
      <h3>Conversations</h3>
      <ErrorText error={conversations.error} />
      {conversations.value !== undefined &&
        (conversations.value.conversations.length === 0 && conversations.offset === 0
          ? <p class="muted">No conversations yet.</p>
          : (
            <>
              <Table
                class="conversations"
                headers={["Conversation", "Messages", "Last message", ""]}
                rows={conversations.value.conversations.map((c) => [
                  <button
                    type="button"
                    class="link"
                    aria-current={c.id === conversation ? "true" : undefined}
                    onClick={() => open(c.id)}
                  >
                    {c.title}
                  </button>,
                  c.message_count,
                  c.updated_at.slice(0, 16).replace("T", " "),
                  <DeleteButton
                    what="conversation"
                    name={c.title}
                    onDelete={() =>
                      client.assistant.remove({ path: { conversation_id: c.id } }).then(() => {
                        if (c.id === conversation) {
                          setConversation(undefined)
                          setTranscript([])
                        }
                        conversations.reload()
                      })}
                  />
                ])}
              />
              <Pager
                limit={conversationsPage}
                offset={conversations.offset}
                shown={conversations.value.conversations.length}
                onPage={conversations.goTo}
              />
            </>
          ))}
    </section>
  )
}
