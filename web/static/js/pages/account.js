// Logging in and signing up. The session is a cookie the server sets; see
// session.js.

import { api } from "../api.js";
import { field, h, onSubmit, radio } from "../dom.js";
import { clearNotice, showRefusal } from "../notice.js";
import { go, localPath, setTitle } from "../router.js";
import { currentUser, logIn } from "../session.js";

/**
 * Where to go after logging in: ?next=… when it is a page of ours, else home.
 * @param {Record<string, string>} query
 * @param {import("../types.js").Principal} user
 * @returns {string}
 */
function nextPage(query, user) {
  return localPath(query.next) ?? (user.kind === "organizer" ? "/organizer" : "/events");
}

/** @type {import("../router.js").Page} */
export async function loginPage({ main, query, signal }) {
  setTitle(main, "Log in");
  const user = currentUser();
  if (user) {
    main.append(h("p", {}, `You are logged in as ${user.email}.`));
    return;
  }
  const email = field("Email", { type: "email", name: "email", autocomplete: "username", required: true });
  const password = field("Password", { type: "password", name: "password", autocomplete: "current-password", required: true });
  const form = h("form", { class: "form narrow" },
    email.field, password.field,
    h("button", { type: "submit", class: "primary" }, "Log in"));
  main.append(form, h("p", {}, "No account yet? ", h("a", { href: "#/signup" }, "Sign up")));

  onSubmit(form, async () => {
    clearNotice();
    try {
      const user = await logIn(email.input.value.trim(), password.input.value);
      go(nextPage(query, user));
    } catch (err) {
      showRefusal(err, signal);
      password.input.select();
    }
  });
}

/** @type {import("../router.js").Page} */
export async function signupPage({ main, query, signal }) {
  setTitle(main, "Sign up");
  const name = field("Name", { name: "name", autocomplete: "name", required: true, maxlength: 200 });
  const email = field("Email", { type: "email", name: "email", autocomplete: "email", required: true });
  const password = field("Password", {
    type: "password", name: "password", autocomplete: "new-password", required: true, minlength: 10, maxlength: 72,
  }, "10 to 72 characters.");
  const kinds = h("fieldset", { class: "choices" },
    h("legend", {}, "I want to"),
    radio("kind", "buyer", "Buy tickets", true),
    radio("kind", "organizer", "Organize events", false));
  const form = h("form", { class: "form narrow" },
    kinds, name.field, email.field, password.field,
    h("button", { type: "submit", class: "primary" }, "Sign up"));
  main.append(form, h("p", {}, "Have an account? ", h("a", { href: "#/login" }, "Log in")));

  onSubmit(form, async () => {
    clearNotice();
    const kind = new FormData(form).get("kind");
    const body = { name: name.input.value.trim(), email: email.input.value.trim(), password: password.input.value };
    try {
      await api("POST", kind === "organizer" ? "/v1/organizers" : "/v1/buyers", { body });
      const user = await logIn(body.email, body.password);
      go(nextPage(query, user), `Welcome, ${body.name}! You are signed up and logged in.`);
    } catch (err) {
      showRefusal(err, signal);
    }
  });
}
