import type { Node, parse as Parse } from "acorn"

// Plain functions, without Effect: the check thread imports this module too.

/**
 * Steps of a program counted per QuickJS interrupt check of `SandboxLimits.cpuChecksPerCall`:
 * QuickJS checks its interrupt handler about every 10 000 jumps and calls, and a counted
 * program's steps are its loop iterations and calls, so a budget means about as much work on
 * either runtime (QuickJS counts one to three times V8's steps for the same code).
 */
export const stepsPerCheck = 10_000

/** What the guest throws when a call spent its steps (a `RangeError`), and the host reads as over budget. */
export const overBudgetMessage = "The program spent its CPU budget"

/** A program whose every loop iteration and function call counts a step, and the global it calls to count. */
export interface CountedProgram {
  readonly code: string
  readonly counter: string
}

/** Where a program's source fails to parse, V8-style: `SyntaxError: message [program.js:line:column]`. */
export interface ParseFailure {
  readonly text: string
}

interface Insert {
  readonly at: number
  readonly text: string
  readonly closing: boolean
  /** Where the node it belongs to starts. */
  readonly node: number
}

/** At one position: closing inserts first, the innermost node's first; then opening ones, the outermost's first. */
const byPosition = (a: Insert, b: Insert) =>
  a.at - b.at ||
  (a.closing === b.closing ? (a.closing ? b.node - a.node : a.node - b.node) : a.closing ? -1 : 1)

type AnyNode = Node & Record<string, unknown>

const loops = new Set(["ForStatement", "ForInStatement", "ForOfStatement", "WhileStatement", "DoWhileStatement"])
const functions = new Set(["FunctionDeclaration", "FunctionExpression", "ArrowFunctionExpression"])

const isNode = (value: unknown): value is AnyNode =>
  typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string"

/** `__steps`, or `__steps1`, `__steps2`… if the source contains it. */
const unusedName = (source: string) => {
  let name = "__steps"
  for (let n = 1; source.includes(name); n++) name = `__steps${n}`
  return name
}

/**
 * The program with a call of `counter()` at the start of every loop body and function body, for a
 * runtime that cannot count what a program does itself (V8: its budget is then a count, and an
 * outcome the same on any machine and under any load). Only text is inserted, never a line, so
 * positions keep their lines. The counter's name is, unless given, one the source does not
 * contain, so no declaration of the program can shadow it.
 */
const countSteps = (
  parse: typeof Parse,
  source: string,
  counter = unusedName(source)
): CountedProgram | ParseFailure => {
  let ast: AnyNode
  try {
    ast = parse(source, { ecmaVersion: "latest", sourceType: "module" }) as unknown as AnyNode
  } catch (e) {
    const { loc, message } = e as { loc?: { line: number; column: number }; message: string }
    const text = message.replace(/ \(\d+:\d+\)$/, "")
    return { text: `SyntaxError: ${text}${loc ? ` [program.js:${loc.line}:${loc.column + 1}]` : ""}` }
  }
  const call = `${counter}();`
  const inserts: Array<Insert> = []
  /** Counts a step as `body` (a statement, or an arrow function's expression) starts. */
  const countAt = (body: AnyNode, expression: boolean) => {
    if (body.type === "BlockStatement") {
      inserts.push({ at: body.start + 1, text: call, closing: false, node: body.start })
    } else {
      const [open, close] = expression ? [`(${counter}(), `, ")"] : [`{${call}`, "}"]
      inserts.push({ at: body.start, text: open, closing: false, node: body.start })
      inserts.push({ at: body.end, text: close, closing: true, node: body.start })
    }
  }
  const visit = (node: AnyNode) => {
    if (loops.has(node.type)) countAt(node["body"] as AnyNode, false)
    if (functions.has(node.type)) countAt(node["body"] as AnyNode, node["expression"] === true)
    for (const key in node) {
      const value = node[key]
      if (Array.isArray(value)) {
        for (const item of value) if (isNode(item)) visit(item)
      } else if (isNode(value)) {
        visit(value)
      }
    }
  }
  visit(ast)
  inserts.sort(byPosition)
  let code = "", from = 0
  for (const { at, text } of inserts) {
    code += source.slice(from, at) + text
    from = at
  }
  return { code: code + source.slice(from), counter }
}

/** `countSteps` with its parser loaded. */
export type StepCounter = (source: string, counter?: string) => CountedProgram | ParseFailure

let loading: Promise<StepCounter> | undefined

/**
 * The step counter, once its parser (acorn, about 200 KB) has loaded: on the first program a V8
 * runtime loads, not with the platform at every start.
 */
export const loadStepCounter = (): Promise<StepCounter> =>
  loading ??= import("acorn").then(({ parse }) => (source, counter) => countSteps(parse, source, counter))
