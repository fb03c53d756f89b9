/**
 * The program editor's CodeMirror 6, loaded on demand from a chunk of its own (see `CodeEditor.tsx`):
 * line numbers, undo, JavaScript or TypeScript highlighting, and a compile error marked at its line
 * (the line tinted, a marker in the gutter carrying the message). Tab is left to move the focus, so
 * the editor never traps a keyboard.
 */
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands"
import { javascriptLanguage, typescriptLanguage } from "@codemirror/lang-javascript"
import { defaultHighlightStyle, LanguageSupport, syntaxHighlighting } from "@codemirror/language"
import { Compartment, EditorSelection, RangeSet, StateEffect, StateField } from "@codemirror/state"
import { Decoration, drawSelection, EditorView, gutter, GutterMarker, keymap, lineNumbers } from "@codemirror/view"

/** Where a compile error is: its line (1-based), column when known, and the API's message. */
export interface CodeError {
  readonly line: number
  readonly column?: number | undefined
  readonly message: string
}

const setError = StateEffect.define<CodeError | null>()

/** The error shown, until the next edit or the next error. */
const errorField = StateField.define<CodeError | null>({
  create: () => null,
  update: (error, tr) => {
    for (const effect of tr.effects) if (effect.is(setError)) return effect.value
    return tr.docChanged ? null : error
  }
})

const errorLine = Decoration.line({ class: "cm-error-line" })

class ErrorMarker extends GutterMarker {
  constructor(readonly message: string) {
    super()
  }
  override eq(other: ErrorMarker) {
    return other.message === this.message
  }
  override toDOM() {
    const marker = document.createElement("span")
    marker.textContent = "●"
    // The gutter's spacer (no message) only holds its width.
    if (this.message === "") return marker
    marker.className = "cm-error-marker"
    marker.title = this.message
    marker.setAttribute("role", "img")
    marker.setAttribute("aria-label", this.message)
    return marker
  }
}

/** The error's line in the document, when it has that many lines. */
const lineOf = (view: { state: EditorView["state"] }, error: CodeError | null) =>
  error === null || error.line < 1 || error.line > view.state.doc.lines ? undefined : view.state.doc.line(error.line)

const errorDecorations = EditorView.decorations.compute([errorField], (state) => {
  const line = lineOf({ state }, state.field(errorField))
  return line === undefined ? Decoration.none : Decoration.set([errorLine.range(line.from)])
})

const errorGutter = gutter({
  class: "cm-error-gutter",
  markers: (view) => {
    const error = view.state.field(errorField)
    const line = lineOf(view, error)
    return line === undefined ? RangeSet.empty : RangeSet.of([new ErrorMarker(error!.message).range(line.from)])
  },
  initialSpacer: () => new ErrorMarker(""),
  lineMarkerChange: (update) => update.transactions.some((tr) => tr.effects.some((e) => e.is(setError)))
})

export type Language = "javascript" | "typescript"

// The grammar alone: the package's `javascript()` adds completion and linting, which the editor does without.
const languageOf = (language: Language) =>
  new LanguageSupport(language === "typescript" ? typescriptLanguage : javascriptLanguage)

/** An editor in `parent`; `onChange` hears every edit's whole text. */
export const mountEditor = (parent: HTMLElement, options: {
  readonly doc: string
  readonly label: string
  readonly language: Language
  readonly onChange: (doc: string) => void
}) => {
  const language = new Compartment()
  const view = new EditorView({
    parent,
    doc: options.doc,
    extensions: [
      lineNumbers(),
      errorGutter,
      history(),
      drawSelection(),
      keymap.of([...defaultKeymap, ...historyKeymap]),
      syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
      language.of(languageOf(options.language)),
      errorField,
      errorDecorations,
      EditorView.contentAttributes.of({ "aria-label": options.label }),
      EditorView.updateListener.of((update) => {
        if (update.docChanged) options.onChange(update.state.doc.toString())
      })
    ]
  })
  return {
    view,
    setLanguage: (next: Language) => view.dispatch({ effects: language.reconfigure(languageOf(next)) }),
    /** Marks the error's line, selects it and brings it into view; null clears the mark. */
    showError: (error: CodeError | null) => {
      const line = lineOf(view, error)
      view.dispatch({
        effects: [
          setError.of(error),
          ...(line === undefined ? [] : [EditorView.scrollIntoView(line.from, { y: "center" })])
        ],
        ...(line === undefined ? {} : { selection: EditorSelection.range(line.from, line.to) })
      })
      if (line !== undefined) view.focus()
    },
    destroy: () => view.destroy()
  }
}

export type MountedEditor = ReturnType<typeof mountEditor>
