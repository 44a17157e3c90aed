// A tiny element builder, so that pages never build HTML from strings: text is
// always text (no escaping to forget), and nothing needs innerHTML. Under the
// page's Content-Security-Policy there are no inline handlers or style
// attributes either: handlers are added here with addEventListener, looks are
// CSS classes.
//
//   h("button", {type: "button", class: "primary", onclick: save}, "Save")
//   h("p", {}, "Seat ", h("strong", {}, "A1"))

/**
 * Makes an element.
 * attrs: "class" sets className; "on<event>" adds a listener; true sets a
 * boolean attribute, false/null/undefined leaves it out; anything else is set
 * as an attribute (aria-*, data-*, for, …).
 * children: nodes or strings (as text); null, undefined and false are skipped;
 * arrays are flattened.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") el.className = value;
    else if (name.startsWith("on") && typeof value === "function") el.addEventListener(name.slice(2), value);
    else if (value === true) el.setAttribute(name, "");
    else el.setAttribute(name, String(value));
  }
  append(el, children);
  return el;
}

/** Appends children (nodes, strings, arrays of them) to el. */
export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Replaces everything in el with children. */
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/** A unique id for pairing labels, hints and controls. */
let counter = 0;
export function uid(prefix = "id") {
  counter += 1;
  return `${prefix}-${counter}`;
}

/**
 * A labelled form field: a label, the control and an optional hint tied to the
 * control with aria-describedby. Returns {field, input}.
 */
export function field(label, attrs = {}, hint = "") {
  // tag: "input" (the default) or "select"; options: a select's [value, text] pairs.
  const { tag = "input", options, ...rest } = attrs;
  const id = rest.id || uid("f");
  const hintId = hint ? `${id}-hint` : null;
  const input = h(tag, { ...rest, id, "aria-describedby": hintId });
  for (const [value, text] of options || []) input.append(h("option", { value }, text));
  const wrap = h("div", { class: "field" },
    h("label", { for: id }, label),
    hint ? h("p", { class: "hint", id: hintId }, hint) : null,
    input);
  return { field: wrap, input };
}

/** Calls fn when signal aborts (the page was left): timers, streams, … */
export function onAbort(signal, fn) {
  if (signal.aborted) fn();
  else signal.addEventListener("abort", fn, { once: true });
}

/** Waits ms milliseconds, or rejects with an AbortError when signal aborts first. */
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

/** One labelled radio button. */
export function radio(name, value, label, checked) {
  const id = `${name}-${value}`;
  return h("div", { class: "choice" },
    h("input", { type: "radio", name, value, id, checked }),
    h("label", { for: id }, label));
}
