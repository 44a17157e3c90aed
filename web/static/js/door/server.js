// The door's calls to Stagedoor, with the scanner key (X-Api-Key), each under
// a short deadline: at the door a slow answer is as bad as none, and the
// device then decides offline.

/** The server could not be reached, or did not answer in time. */
export class Unreachable extends Error {}

/** An answer, with what the door needs of it. */
export class Answer {
  constructor(status, headers, body) {
    this.status = status;
    this.body = body;
    // Retry-After in seconds, or the problem's retry_after_ms: when to try again.
    const ms = body && typeof body.retry_after_ms === "number" ? body.retry_after_ms : Number(headers.get("Retry-After")) * 1000;
    this.retryAfterMs = Number.isFinite(ms) && ms > 0 ? ms : 0;
  }
}

export class Server {
  constructor(key, { timeoutMs = 2500 } = {}) {
    this.key = key;
    this.timeoutMs = timeoutMs;
  }

  async call(method, path, body) {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), this.timeoutMs);
    let response;
    try {
      response = await fetch(path, {
        method,
        headers: { "X-Api-Key": this.key, ...(body ? { "Content-Type": "application/json" } : {}) },
        body: body ? JSON.stringify(body) : undefined,
        signal: abort.signal,
        cache: "no-store",
        credentials: "omit", // the scanner key is the credential, never a cookie
      });
    } catch (err) {
      throw new Unreachable(err.name === "AbortError" ? "no answer in time" : "the network is down");
    } finally {
      clearTimeout(timer);
    }
    let json = null;
    try {
      json = await response.json();
    } catch {
      /* no body */
    }
    return new Answer(response.status, response.headers, json);
  }

  scan(code) {
    return this.call("POST", "/v1/scans", { code });
  }

  keyset() {
    return this.call("GET", "/v1/scanner/keyset");
  }

  revocations(after) {
    return this.call("GET", `/v1/scanner/revocations?after=${encodeURIComponent(after)}`);
  }

  upload(scans) {
    return this.call("POST", "/v1/scans/batch", { scans });
  }
}
