/**
 * Building the page without `innerHTML`: every text from the API goes in as a text node, so a
 * name like `<img onerror=...>` shows as typed and never runs.
 */
type Child = Node | string | number | null | undefined | false

export const h = <K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | boolean | undefined> = {},
  ...children: ReadonlyArray<Child | ReadonlyArray<Child>>
): HTMLElementTagNameMap[K] => {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes)) {
    if (value === true) element.setAttribute(name, "")
    else if (typeof value === "string") element.setAttribute(name, value)
  }
  append(element, children.flat())
  return element
}

export const append = (parent: Node, children: ReadonlyArray<Child>) => {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue
    parent.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)))
  }
}

const svgNamespace = "http://www.w3.org/2000/svg"

export const svg = (tag: string, attributes: Record<string, string | number>, ...children: ReadonlyArray<Child>) => {
  const element = document.createElementNS(svgNamespace, tag)
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value))
  append(element, children)
  return element
}

/** Replaces an element's content. */
export const show = (parent: Element, ...children: ReadonlyArray<Child>) => {
  parent.replaceChildren()
  append(parent, children)
}

export const number = (value: number | null | undefined, digits = 2) =>
  value === null || value === undefined ? "–" : value.toLocaleString("en-US", { maximumFractionDigits: digits })

export const table = (headers: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<Child>>) =>
  h(
    "table",
    {},
    h("thead", {}, h("tr", {}, headers.map((header) => h("th", {}, header)))),
    h("tbody", {}, rows.map((row) => h("tr", {}, row.map((cell) => h("td", {}, cell)))))
  )
