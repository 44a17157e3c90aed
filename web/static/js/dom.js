// A tiny element builder, so that pages never build HTML from strings: text is
// always text (no escaping to forget), and nothing needs innerHTML. Under the
// page's Content-Security-Policy there are no inline handlers or style
// attributes either: handlers are added here with addEventListener, looks are
// CSS classes.
//
//   h("button", {type: "button", class: "primary", onclick: save}, "Save")
//   h("p", {}, "Seat ", h("strong", {}, "A1"))

/**
 * An attribute's value; a function for an "on<event>" name.
 * @typedef {string | number | boolean | null | undefined | ((event: Event) => unknown)} AttrValue
 */

/**
 * What h() and append() take as children.
 * @typedef {Node | string | number | null | undefined | false | Child[]} Child
 */

/**
 * Makes an element.
 * attrs: "class" sets className; "on<event>" adds a listener; true sets a
 * boolean attribute, false/null/undefined leaves it out; anything else is set
 * as an attribute (aria-*, data-*, for, …).
 * children: nodes or strings (as text); null, undefined and false are skipped;
 * arrays are flattened.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, AttrValue>} [attrs]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === "function") {
      if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    } else if (name === "class") el.className = String(value);
    else if (value === true) el.setAttribute(name, "");
    else el.setAttribute(name, String(value));
  }
  append(el, children);
  return el;
}

/**
 * Appends children (nodes, strings, arrays of them) to el.
 * @template {Element} E
 * @param {E} el
 * @param {Child[]} children
 * @returns {E}
 */
export function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/**
 * Replaces everything in el with children.
 * @template {Element} E
 * @param {E} el
 * @param {...Child} children
 * @returns {E}
 */
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/**
 * The page's element with this id, of the type given (HTMLElement when none):
 * one the page's HTML must have, so a missing one (or one of another type)
 * throws.
 * @template {HTMLElement} [T=HTMLElement]
 * @param {string} id
 * @param {{new (): T, readonly prototype: T}} [type]
 * @returns {T}
 */
export function byId(id, type) {
  const el = document.getElementById(id);
  const want = type ?? HTMLElement;
  if (!(el instanceof want)) throw new Error(`the page has no ${want.name} #${id}`);
  return /** @type {T} */ (el);
}

let counter = 0;

/**
 * A unique id for pairing labels, hints and controls.
 * @param {string} [prefix]
 * @returns {string}
 */
export function uid(prefix = "id") {
  counter += 1;
  return `${prefix}-${counter}`;
}

/**
 * A labelled form field: a label, an <input> and an optional hint tied to the
 * input with aria-describedby. Returns {field, input}.
 * @param {string} label
 * @param {Record<string, AttrValue>} [attrs] the input's
 * @param {string} [hint]
 * @returns {{field: HTMLDivElement, input: HTMLInputElement}}
 */
export function field(label, attrs = {}, hint = "") {
  const id = String(attrs.id || uid("f"));
  const input = h("input", { ...attrs, id, "aria-describedby": hint ? `${id}-hint` : null });
  return { field: labelled(label, input, hint), input };
}

/**
 * A labelled <select> of options ([value, text] pairs), as field() an input.
 * @param {string} label
 * @param {[string, string][]} options
 * @param {string} [hint]
 * @returns {{field: HTMLDivElement, input: HTMLSelectElement}}
 */
export function selectField(label, options, hint = "") {
  const id = uid("f");
  const input = h("select", { id, "aria-describedby": hint ? `${id}-hint` : null },
    options.map(([value, text]) => h("option", { value }, text)));
  return { field: labelled(label, input, hint), input };
}

/**
 * The field's wrapper: the label, the hint (id: the control's id and "-hint"),
 * then the control.
 * @param {string} label
 * @param {HTMLInputElement | HTMLSelectElement} control
 * @param {string} hint
 * @returns {HTMLDivElement}
 */
function labelled(label, control, hint) {
  return h("div", { class: "field" },
    h("label", { for: control.id }, label),
    hint ? h("p", { class: "hint", id: `${control.id}-hint` }, hint) : null,
    control);
}

/**
 * Runs a form's submit handler (instead of the browser's submit) with its
 * submit button disabled meanwhile, so that a second click sends nothing.
 * @param {HTMLFormElement} form
 * @param {() => Promise<void>} handler
 */
export function onSubmit(form, handler) {
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const button = form.querySelector("button[type=submit]");
    if (!(button instanceof HTMLButtonElement)) throw new Error("the form has no submit button");
    button.disabled = true;
    try {
      await handler();
    } finally {
      button.disabled = false;
    }
  });
}

/**
 * Calls fn when signal aborts (the page was left): timers, streams, …
 * @param {AbortSignal} signal
 * @param {() => void} fn
 */
export function onAbort(signal, fn) {
  if (signal.aborted) fn();
  else signal.addEventListener("abort", fn, { once: true });
}

/**
 * Whether err is an AbortError: the page was left, or the user stopped.
 * @param {unknown} err
 * @returns {boolean}
 */
export function isAbort(err) {
  return typeof err === "object" && err !== null && "name" in err && err.name === "AbortError";
}

/**
 * Waits ms milliseconds, or rejects with an AbortError when signal aborts first.
 * @param {number} ms
 * @param {AbortSignal} [signal]
 * @returns {Promise<void>}
 */
export function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}

/**
 * One labelled radio button.
 * @param {string} name
 * @param {string} value
 * @param {string} label
 * @param {boolean} checked
 * @returns {HTMLDivElement}
 */
export function radio(name, value, label, checked) {
  const id = `${name}-${value}`;
  return h("div", { class: "choice" },
    h("input", { type: "radio", name, value, id, checked }),
    h("label", { for: id }, label));
}
